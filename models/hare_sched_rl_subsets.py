"""Hare_Sched_RL with (9) imposed for *every subset* S of the tasks on each GPU (Queyranne's
full parallel-inequality polyhedron), instead of once for all of D:

    sum_{i in S} y_{i,m} T^c_{i,m} (x_i + T^c_{i,m}) >= 1/2 [(sum_{i in S} y_{i,m} T^c_{i,m})^2
                                                        + sum_{i in S} (y_{i,m} T^c_{i,m})^2]   for all S, m   (9S)

linearized exactly as in :mod:`hare_sched_rl` (u = y x, v = y y). Every feasible schedule
satisfies (9S) (the tasks of S that run on m are trained one at a time), so this is still a
lower bound of Hare_Sched, at least as strong as Hare_Sched_RL. The proof of Lemma 2 applies
(9) to the prefix {pi(1), ..., pi(j)} of the H order, which needs exactly these subset
inequalities (see proofs/hare_lemma2.md).

There are 2^|D| |M| of them. ``subsets="lazy"`` (the default) starts from (9) for all of D and
adds (9S) as cuts: after each optimal solve, on each GPU m, the tasks with y_{i,m} = 1 sorted by
x_i + T^c_{i,m} are checked prefix by prefix -- Queyranne's separation, exact for (9S) restricted
to the tasks on m (the most violated set is a prefix in that order), and a set holding a task off
m is no stronger there. The engine re-solves until no prefix is violated: the final solution
satisfies every (9S), so its optimum is the full model's. ``subsets="all"`` writes out every
subset (at most 12 tasks), the cross-check.
"""

from __future__ import annotations

from itertools import combinations

import pyomo.environ as pe

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.models.hare_sched_rl import add_products, base_model, extract

MAX_TASKS = 12  # subsets="all"
TOL = 1e-6  # a cut is added when it is violated by more than this, relative to its right side


def subset_inequality(m: pe.ConcreteModel, S: tuple, g: int):
    """(9S) for the tasks S on GPU g, linearized: sum T u >= sum_{i<j} T T v."""
    return sum(m.Tc[i[0], g] * m.u[i, g] for i in S) >= sum(
        m.Tc[i[0], g] * m.Tc[j[0], g] * m.v[min(i, j) + max(i, j), g] for i, j in combinations(S, 2)
    )


def build(instance: Instance, subsets: str = "lazy") -> pe.ConcreteModel:
    if subsets not in ("lazy", "all"):
        raise HetschedError(f"subsets must be 'lazy' or 'all' (got {subsets!r})")
    n_tasks = sum(j.n_tasks for j in instance.jobs)
    if subsets == "all" and n_tasks > MAX_TASKS:
        raise HetschedError(
            f"hare-sched-rl-subsets with subsets=all writes out all 2^|D| subsets: {n_tasks} "
            f"tasks is more than {MAX_TASKS}; use subsets=lazy"
        )
    m = base_model(instance)
    add_products(m)
    tasks = sorted(m.D)
    if subsets == "all":
        family = [S for size in range(2, len(tasks) + 1) for S in combinations(tasks, size)]
        m.S = pe.Set(initialize=range(len(family)), doc="task subsets S, |S| >= 2")
        m.rl_queyranne_subset = pe.Constraint(
            m.S, m.M, rule=lambda _, s, g: subset_inequality(m, family[s], g)
        )  # (9S)
    else:
        m.rl_queyranne = pe.Constraint(
            m.M, rule=lambda _, g: subset_inequality(m, tasks, g)
        )  # (9) for S = D
        m.rl_queyranne_subset = pe.ConstraintList(doc="(9S), added by separate()")
    return m


def separate(m: pe.ConcreteModel, value) -> int:
    """Add the most violated prefix inequality (9S) of every GPU; return how many were added."""
    if not isinstance(m.component("rl_queyranne_subset"), pe.ConstraintList):
        return 0  # subsets="all": nothing is missing
    added = 0
    for g in m.M:
        on = [i for i in m.D if value(m.y[i, g]) > 0.5]
        on.sort(key=lambda i: (value(m.x[i]) + m.Tc[i[0], g], i))
        worst, cut, lhs, rhs, load = 0.0, None, 0.0, 0.0, 0.0
        for k, i in enumerate(on):  # prefix on[:k+1]: sum T x >= sum_{i<j} T_i T_j
            p = m.Tc[i[0], g]
            lhs += p * value(m.x[i])
            rhs += p * load
            load += p
            short = rhs - lhs
            if k and short > TOL * max(1.0, rhs) and short > worst:
                worst, cut = short, tuple(on[: k + 1])
        if cut is not None:
            m.rl_queyranne_subset.add(subset_inequality(m, cut, g))
            added += 1
    return added


SPEC = FormulationSpec(
    name="hare-sched-rl-subsets",
    kind="pyomo",
    build=build,
    extract=extract,
    objective_is_bound=True,
    options=("subsets",),
    separate=separate,
    summary="Hare_Sched_RL with (9) for every task subset per GPU (lazy Queyranne separation): the relaxation Lemma 2 needs",
)
