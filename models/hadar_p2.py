"""Hadar's P2 (eqs. (2)-(2c)) and its LP relaxation over explicitly enumerated schedules (small
instances only; the dual P3 is ``models/hadar_p3.py``, column generation ``models/hadar_p2_colgen.py`` on the one engine).

A schedule s of job j picks, in each slot from a_j on, either nothing or one gang (W_j GPUs over
machines and types within capacity), and ends in the slot where the job's work is done (f_js);
every schedule that finishes by T is enumerated (:func:`schedules`), with utility U_j(f_js).

    P2:  max sum_{j,s} U_js y_js   s.t.  capacity[h,r,t]: sum_{j,s} w^s_{jh}^r(t) y_js <= c_h^r   (2a)
                                         one_schedule[j]: sum_s y_js <= 1                        (2b)
                                         y binary (``hadar-p2``) or in [0, 1] (``hadar-p2-lp``)  (2c)
By LP duality LP(P2) = P3, and P2 = P1 (both checked in the tests). The enumeration refuses more
than ``MAX_SCHEDULES`` schedules per job.
"""

from __future__ import annotations

from itertools import product

import pyomo.environ as pe

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.hadar.utility import utility
from hetsched.hadar.view import HadarView, hadar_view
from hetsched.instance.model import Instance
from hetsched.models.hadar_p1 import HadarDecisions, check

MAX_SCHEDULES = 20000


def gangs(view: HadarView, j: int) -> list[dict[tuple[int, int], int]]:
    """Every allocation of W_j GPUs within capacity: {(h, r): count}."""
    cells = [
        (h, r)
        for h in range(len(view.machines))
        for r in range(len(view.types))
        if view.capacity[h, r] > 0
    ]
    need = int(view.workers[j])
    out = []
    for counts in product(*[range(min(need, int(view.capacity[c])) + 1) for c in cells]):
        if sum(counts) == need:
            out.append({c: n for c, n in zip(cells, counts) if n})
    return out


def schedules(view: HadarView, j: int, utility_name: str | None = None) -> list[tuple[dict, float]]:
    """All schedules of job j that finish by T: ({slot: gang}, U_j(f))."""
    options = [
        (g, view.rate(j, sorted({r for _, r in g}), int(view.workers[j]))) for g in gangs(view, j)
    ]
    out: list[tuple[dict, float]] = []

    def extend(t: int, done: float, plan: dict) -> None:
        if len(out) > MAX_SCHEDULES:
            raise HetschedError(
                f"job {view.job_ids[j]} has more than {MAX_SCHEDULES} schedules: instance too large for P2"
            )
        if t > view.horizon:
            return
        for g, rate in options:
            plan[t] = g
            if done + rate >= view.work[j] * (1 - 1e-12):
                jct = view.jct(j, t)
                out.append((dict(plan), utility(view, utility_name, j, jct)))
            else:
                extend(t + 1, done + rate, plan)
            del plan[t]
        extend(t + 1, done, plan)  # idle in slot t

    extend(int(view.arrival[j]), 0.0, {})
    return out


def enumerated(instance: Instance):
    v = hadar_view(instance)
    S = [(j, k, plan, u) for j in range(v.n_jobs) for k, (plan, u) in enumerate(schedules(v, j))]
    return v, S


def build_p2(instance: Instance, relaxed: bool = False) -> pe.ConcreteModel:
    v, S = enumerated(instance)
    m = pe.ConcreteModel(name=f"hadar_p2{'_lp' if relaxed else ''}[{instance.name}]")
    m.S = pe.Set(initialize=range(len(S)), doc="(job, schedule) pairs")
    m.y = pe.Var(m.S, domain=pe.UnitInterval if relaxed else pe.Binary, doc="y_js")
    m.objective = pe.Objective(
        expr=sum(float(S[i][3]) * m.y[i] for i in m.S), sense=pe.maximize
    )  # (2)
    uses: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    for i, (_, _, plan, _) in enumerate(S):
        for t, g in plan.items():
            for (h, r), n in g.items():
                uses.setdefault((h, r, t), []).append((i, n))
    m.capacity = pe.Constraint(
        list(uses),
        rule=lambda _, h, r, t: sum(n * m.y[i] for i, n in uses[h, r, t]) <= int(v.capacity[h, r]),
    )  # (2a)
    has = {
        S[i][0] for i in range(len(S))
    }  # a job with no schedule finishing by T cannot be admitted
    m.one_schedule = pe.Constraint(
        sorted(has), rule=lambda _, j: sum(m.y[i] for i in m.S if S[i][0] == j) <= 1
    )  # (2b)
    m.schedules, m.view = S, v
    return m


def extract_p2(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> HadarDecisions:
    v, S = m.view, m.schedules
    out: dict = {jid: {} for jid in v.job_ids}
    for i in m.S:
        if value(m.y[i]) > 0.5:
            j, _, plan, _ = S[i]
            out[v.job_ids[j]] = {
                t: {(v.machines[h], v.types[r]): n for (h, r), n in g.items()}
                for t, g in plan.items()
            }
    return HadarDecisions(out)


SPECS = [
    FormulationSpec(
        name="hadar-p2",
        kind="pyomo",
        build=build_p2,
        extract=extract_p2,
        validator=check,
        sense="max",
        summary="Hadar P2 (2)-(2c): ILP over enumerated schedules (tiny instances)",
    ),
    FormulationSpec(
        name="hadar-p2-lp",
        kind="pyomo",
        build=lambda inst: build_p2(inst, relaxed=True),
        extract=extract_p2,
        validator=check,
        sense="max",
        objective_is_bound=True,
        summary="LP relaxation of Hadar P2: an upper bound on P1",
    ),
]
