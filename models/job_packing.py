"""Job packing in one round (AppSci'24, Sec. 4.3, Algorithm 3) as an assignment MILP: the packing
of largest total normalized throughput (:mod:`hetsched.similarity.packing.problem` defines w and the value).

    max  |S| + sum_{s in S, q in Q} w(s, q) p_{s,q}                value of the round
    s.t. sum_q p_{s,q} <= 1        for all s in S                   one_partner (Alg. 3 lines 4-7: a GPU holds at most two jobs)
         sum_s p_{s,q} <= 1        for all q in Q                   packed_once (Alg. 3 line 8: q leaves the queue)
         p_{s,q} = 0 where s and q do not fit in the GPU's memory or have no measured pair
                                                                   (Sec. 4.3 memory constraint; pairs not created)

S: jobs scheduled alone on one GPU; Q: the queue. The assignment polytope is integral, so the LP
optimum is integral too; the model keeps p binary anyway.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.exact.spec import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.similarity.packing.algorithms import check_packing
from hetsched.similarity.packing.problem import FORMAT, Packing, packing_from_dict, packing_view


def build(instance: Instance) -> pe.ConcreteModel:
    v = packing_view(instance)
    arcs = [
        (a, b)
        for a in range(len(v.solo))
        for b in range(len(v.queue))
        if not np.isnan(v.gain[a, b])
    ]
    m = pe.ConcreteModel(name=f"job_packing[{instance.name}]")
    m.S = pe.Set(initialize=range(len(v.solo)), doc="jobs scheduled alone on one GPU")
    m.Q = pe.Set(initialize=range(len(v.queue)), doc="queued jobs")
    m.A = pe.Set(initialize=arcs, dimen=2, doc="pairs that can share a GPU")
    m.p = pe.Var(m.A, domain=pe.Binary, doc="p_{s,q}: q is packed onto s's GPU")
    m.value = pe.Objective(
        expr=v.unpacked + sum(float(v.gain[a, b]) * m.p[a, b] for a, b in m.A), sense=pe.maximize
    )  # value of the round (module docstring)
    m.one_partner = pe.Constraint(
        m.S,
        rule=lambda _, a: (
            sum(m.p[a, b] for aa, b in m.A if aa == a) <= 1
            if any(aa == a for aa, _ in m.A)
            else pe.Constraint.Skip
        ),
    )  # Alg. 3 lines 4-7
    m.packed_once = pe.Constraint(
        m.Q,
        rule=lambda _, b: (
            sum(m.p[a, bb] for a, bb in m.A if bb == b) <= 1
            if any(bb == b for _, bb in m.A)
            else pe.Constraint.Skip
        ),
    )  # Alg. 3 line 8
    m.view = v
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> Packing:
    v = m.view
    return Packing(
        tuple(
            (v.job_ids[v.solo[a]], v.job_ids[v.queue[b]]) for a, b in m.A if value(m.p[a, b]) > 0.5
        )
    )


SPEC = FormulationSpec(
    name="job-packing",
    kind="pyomo",
    build=build,
    extract=extract,
    validator=check_packing,
    sense="max",
    solution_format=FORMAT,
    load_solution=packing_from_dict,
    summary="AppSci'24 job packing (Alg. 3's problem): max total normalized throughput, assignment MILP",
)
