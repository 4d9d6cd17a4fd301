"""Hare_Sched_RL with (9) imposed for *every subset* S of the tasks on each GPU (Queyranne's
full parallel-inequality polyhedron), instead of once for all of D:

    sum_{i in S} y_{i,m} T^c_{i,m} (x_i + T^c_{i,m}) >= 1/2 [(sum_{i in S} y_{i,m} T^c_{i,m})^2
                                                        + sum_{i in S} (y_{i,m} T^c_{i,m})^2]   for all S, m   (9S)

linearized exactly as in :mod:`hare_sched_rl` (u = y x, v = y y). Every feasible schedule
satisfies (9S) (the tasks of S that run on m are trained one at a time), so this is still a
lower bound of Hare_Sched, at least as strong as Hare_Sched_RL. The proof of Lemma 2 applies
(9) to the prefix {pi(1), ..., pi(j)} of the H order, which needs exactly these subset
inequalities (see proofs/hare_lemma2.md). 2^|D| subsets: the model refuses more than 12 tasks.
"""

from __future__ import annotations

from itertools import combinations

import pyomo.environ as pe

from hetsched.errors import HetschedError
from hetsched.instance.model import Instance
from hetsched.models.hare_sched_rl import add_products, base_model, extract
from hetsched.spec import FormulationSpec

MAX_TASKS = 12


def build(instance: Instance) -> pe.ConcreteModel:
    n_tasks = sum(j.n_tasks for j in instance.jobs)
    if n_tasks > MAX_TASKS:
        raise HetschedError(
            f"hare-sched-rl-subsets states (9) for all 2^|D| subsets: {n_tasks} tasks "
            f"is more than {MAX_TASKS}; use hare-sched-rl"
        )
    m = base_model(instance)
    add_products(m)
    tasks = sorted(m.D)
    subsets = [S for size in range(2, len(tasks) + 1) for S in combinations(tasks, size)]
    m.S = pe.Set(initialize=range(len(subsets)), doc="task subsets S, |S| >= 2")
    m.rl_queyranne_subset = pe.Constraint(
        m.S,
        m.M,
        rule=lambda _, s, g: (  # (9S)
            sum(m.Tc[i[0], g] * m.u[i, g] for i in subsets[s])
            >= sum(
                m.Tc[i[0], g] * m.Tc[j[0], g] * m.v[i + j, g]
                for i, j in combinations(subsets[s], 2)
            )
        ),
    )
    return m


SPEC = FormulationSpec(
    name="hare-sched-rl-subsets",
    kind="pyomo",
    build=build,
    extract=extract,
    objective_is_bound=True,
    summary="Hare_Sched_RL with (9) for every task subset per GPU (<= 12 tasks): the relaxation Lemma 2 needs",
)
