"""One round of the AppSci'24 similarity policy solved exactly (the problem Algorithm 2 solves
greedily, Sec. 4.2): choose for each queued job at most one option o = (GPU type, GPU count,
batch size) so that the round's value is largest (:mod:`hetsched.similarity.round`).

    max  sum_j sum_{o in O_j} v_{j,o} x_{j,o}                 value: normalized true throughput
    s.t. sum_{o in O_j} x_{j,o} <= 1          for all j       one_option (Alg. 2 lines 9-13: a job is scheduled once)
         sum_{j,o: type(o)=r} n_o x_{j,o} <= N_r  for all r   free_gpus (Alg. 2 line 9: ng <= n_gpu_g)

``estimated=True`` ranks by what the scheduler sees (the closest reference's throughput,
normalized per job) instead of the truth: the gap between that optimum and Algorithm 2 is the
greedy order alone; with the truth it also includes the similarity estimate's error.
"""

from __future__ import annotations

import pyomo.environ as pe

from hetsched.exact.spec import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.similarity.round import check_round, round_view


def build(instance: Instance, estimated: bool = False) -> pe.ConcreteModel:
    v = round_view(instance)
    arcs = [(j, k) for j, opts in enumerate(v.options) for k in range(len(opts))]
    top = [max((o.estimate for o in opts), default=1.0) or 1.0 for opts in v.options]

    def val(j: int, k: int) -> float:
        o = v.options[j][k]
        return o.estimate / top[j] if estimated else o.value

    m = pe.ConcreteModel(name=f"similarity_allocation[{instance.name}]")
    m.A = pe.Set(initialize=arcs, dimen=2, doc="(job, option)")
    m.R = pe.Set(initialize=sorted(v.free), doc="GPU types")
    m.x = pe.Var(m.A, domain=pe.Binary, doc="x_{j,o}: job j runs with option o")
    m.nothing = pe.Var(
        bounds=(0, 0), doc="keeps the model well-formed when no job has an option that fits"
    )
    m.value = pe.Objective(
        expr=m.nothing + sum(val(j, k) * m.x[j, k] for j, k in m.A), sense=pe.maximize
    )  # Sec. 4.2 aim
    m.one_option = pe.Constraint(
        range(len(v.options)),
        rule=lambda _, j: (
            sum(m.x[j, k] for jj, k in m.A if jj == j) <= 1 if v.options[j] else pe.Constraint.Skip
        ),
    )  # Alg. 2 lines 9-13
    uses = {r: [(j, k) for j, k in arcs if v.options[j][k].gpu_type == r] for r in v.free}
    m.free_gpus = pe.Constraint(
        m.R,
        rule=lambda _, r: (
            sum(v.options[j][k].gpus * m.x[j, k] for j, k in uses[r]) <= v.free[r]
            if uses[r]
            else pe.Constraint.Skip
        ),
    )  # Alg. 2 line 9
    m.view = v
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> dict:
    v = m.view
    return {v.job_ids[j]: v.options[j][k] for j, k in m.A if value(m.x[j, k]) > 0.5}


def _check(instance: Instance, decision) -> object:
    return check_round(instance, decision)


SPEC = FormulationSpec(
    name="similarity-allocation",
    kind="pyomo",
    build=build,
    extract=extract,
    validator=_check,
    sense="max",
    options=("estimated",),
    summary="AppSci'24 Alg. 2's round solved exactly: max normalized throughput, one option per job, free GPUs",
)
