"""Hare_Sched (Hare, HPDC'22, Sec. 5.1, eqs. (4)-(8)) as a mixed-integer linear program.

    min  sum_n w_n C_n
    s.t. x_i >= a_n                                       (4) arrival
         sum_m y_{i,m} = 1                                (5) one_gpu
         C_n >= x_i + sum_m y_{i,m} (T^c_{i,m} + T^s_{i,m}) (6) completion
         x_j >= x_i + sum_m y_{i,m} (T^c_{i,m} + T^s_{i,m}), j in D_{r+1}, i in D_r   (7) barrier
         |x_i - x_j| >= y_{k,m} T^c_{k,m} if y_{i,m} = y_{j,m} = 1, k the earlier    (8) no_overlap

(8) is disjunctive. It is linearized with an order variable o_{i,j} (1 if i trains before j
when they share a GPU) and big-M constants M_{i,j,m} = latest(x_i) + T^c_{i,m} - earliest(x_j),
where [earliest, latest] are start windows that contain every optimal schedule: they follow
from a feasible schedule's objective UB via w_n C_n <= UB - sum_{k != n} w_k LB_k
(:meth:`hetsched.hare.view.HareView.start_windows`).

Three reductions keep the model small and its LP bound tighter; none changes the optimum:
* tasks of one job in different rounds never overlap on a GPU, because (7) with T^s >= 0
  already orders them, so (8) is stated only for pairs from different jobs or one round;
* tasks of one round of one job are identical, so their starts may be taken non-decreasing
  in their index (``identical_task_order``); then within a round the order is fixed;
* ``completion_chain``: C_n >= x_i + T_i + (|R_n| - r - 1) L_n for i in round r, where L_n is
  the least length of one round of job n (:attr:`HareView.round_length`).
"""

from __future__ import annotations

from itertools import combinations

import pyomo.environ as pe

from hetsched.exact.spec import FormulationSpec
from hetsched.hare.upper_bound import horizon
from hetsched.hare.view import hare_view
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskAssignment, TaskSchedule
from hetsched.schedule.retime import retime

MAX_DISJUNCTIONS = 2_000_000  # (8) rows: pairs of tasks of different jobs x GPUs


def too_large(instance: Instance) -> str | None:
    """Why the big-M model would be too large to build (None: it is not), estimated before building."""
    per_job = [j.n_tasks for j in instance.jobs]
    total = sum(per_job)
    pairs = (total * total - sum(k * k for k in per_job)) // 2
    if pairs * len(instance.gpus) > MAX_DISJUNCTIONS:
        return (
            f"it would need {pairs * len(instance.gpus)} no_overlap rows (pairs of tasks x GPUs; limit "
            f"{MAX_DISJUNCTIONS}): use the default solver (auto: the anytime portfolio)"
        )
    return None


def build(instance: Instance) -> pe.ConcreteModel:
    h = horizon(instance)
    v, ub, earliest, latest = h.view, h.ub, h.earliest, h.latest
    # keep round-off from cutting a schedule at a window edge; wide enough that HiGHS presolve does not
    # meet near-fixed columns (with 1e-6 windows it reported a 1e-6-infeasible "optimum" as an error)
    slack = 1e-5 * max(1.0, ub)
    tasks = [(t.n, t.r, t.k) for t in v.tasks()]
    lo = {i: float(earliest[i[0], i[1]]) for i in tasks}
    hi = {i: float(latest[i[0], i[1]]) + slack for i in tasks}
    Tc, Ts = v.pair_times()

    m = pe.ConcreteModel(name=f"hare_sched[{instance.name}]")
    m.N = pe.Set(initialize=range(v.n_jobs), doc="jobs")
    m.M = pe.Set(initialize=range(v.n_gpus), doc="GPUs")
    m.D = pe.Set(initialize=tasks, dimen=3, doc="tasks i = (n, r, k)")
    # pairs that may share a GPU and need an order: different jobs (o_{i,j} decides), one round (fixed)
    same_round = [(i, j) for i, j in combinations(tasks, 2) if i[:2] == j[:2]]
    m.P = pe.Set(initialize=[(i, j) for i, j in combinations(tasks, 2) if i[0] != j[0]], dimen=6)
    m.Q = pe.Set(initialize=same_round, dimen=6)

    m.x = pe.Var(m.D, bounds=lambda _, *i: (lo[i], hi[i]), doc="start time x_i")
    m.y = pe.Var(m.D, m.M, domain=pe.Binary, doc="y_{i,m}: task i runs on GPU m")
    c_lb = v.completion_lower_bounds()
    c_ub = h.completion
    m.C = pe.Var(
        m.N, bounds=lambda _, n: (float(c_lb[n]), float(c_ub[n]) + slack), doc="completion C_n"
    )
    m.o = pe.Var(m.P, domain=pe.Binary, doc="o_{i,j} = 1: i trains before j if they share a GPU")

    def busy(i):  # sum_m y_{i,m} (T^c_{i,m} + T^s_{i,m})
        return sum(m.y[i, g] * (Tc[i[0], g] + Ts[i[0], g]) for g in m.M)

    m.total_weighted_completion = pe.Objective(
        expr=sum(float(v.weight[n]) * m.C[n] for n in m.N)
    )  # Sec. 5.1
    m.arrival = pe.Constraint(m.D, rule=lambda _, *i: m.x[i] >= float(v.arrival[i[0]]))  # (4)
    m.one_gpu = pe.Constraint(m.D, rule=lambda _, *i: sum(m.y[i, g] for g in m.M) == 1)  # (5)
    m.completion = pe.Constraint(m.D, rule=lambda _, *i: m.C[i[0]] >= m.x[i] + busy(i))  # (6)
    L = v.round_length  # valid inequality: each later round of job n takes at least L_n
    m.completion_chain = pe.Constraint(
        [i for i in tasks if i[1] < int(v.rounds[i[0]]) - 1],
        rule=lambda _, *i: (
            m.C[i[0]] >= m.x[i] + busy(i) + (int(v.rounds[i[0]]) - 1 - i[1]) * float(L[i[0]])
        ),
    )
    m.barrier = pe.Constraint(  # (7)
        [(i, j) for i in tasks for j in tasks if j[0] == i[0] and j[1] == i[1] + 1],
        rule=lambda _, *ij: m.x[ij[3:]] >= m.x[ij[:3]] + busy(ij[:3]),
    )

    def big_m(i, j, g):  # x_i + T^c_{i,g} - x_j never exceeds this inside the windows
        return max(0.0, hi[i] + Tc[i[0], g] - lo[j])

    # (8) for pairs of different jobs: if both are on GPU g, one trains entirely before the other
    m.no_overlap_i_first = pe.Constraint(
        m.P,
        m.M,
        rule=lambda _, *p: (
            m.x[p[3:6]]
            >= m.x[p[:3]]
            + Tc[p[0], p[6]]
            - big_m(p[:3], p[3:6], p[6]) * (3 - m.y[p[:3], p[6]] - m.y[p[3:6], p[6]] - m.o[p[:6]])
        ),
    )  # (8)
    m.no_overlap_j_first = pe.Constraint(
        m.P,
        m.M,
        rule=lambda _, *p: (
            m.x[p[:3]]
            >= m.x[p[3:6]]
            + Tc[p[3], p[6]]
            - big_m(p[3:6], p[:3], p[6]) * (2 - m.y[p[:3], p[6]] - m.y[p[3:6], p[6]] + m.o[p[:6]])
        ),
    )  # (8)
    # (8) within a round of one job, where the order is fixed by identical_task_order
    m.no_overlap_same_round = pe.Constraint(
        m.Q,
        m.M,
        rule=lambda _, *p: (
            m.x[p[3:6]]
            >= m.x[p[:3]]
            + Tc[p[0], p[6]]
            - big_m(p[:3], p[3:6], p[6]) * (2 - m.y[p[:3], p[6]] - m.y[p[3:6], p[6]])
        ),
    )  # (8), one round
    m.identical_task_order = pe.Constraint(
        [(i, j) for i, j in same_round if j[2] == i[2] + 1],
        rule=lambda _, *p: m.x[p[:3]] <= m.x[p[3:6]],
    )
    return m


def solver_starts(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> TaskSchedule:
    """Each task on its GPU of largest y at the solver's x (relaxations read their solution this way)."""
    v = hare_view(instance)
    out = []
    for i in m.D:
        g = max(m.M, key=lambda g: value(m.y[i, g]))
        out.append(TaskAssignment(v.job_ids[i[0]], i[1], i[2], v.gpu_ids[g], float(value(m.x[i]))))
    return TaskSchedule.of(out, instance.name, instance_hash(instance))


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> TaskSchedule:
    """The solver's GPUs and orders, re-timed semi-actively (:func:`hetsched.schedule.retime.retime`): feasible
    with no tolerance, never below the true optimum."""
    return retime(instance, solver_starts(m, instance, value))


SPEC = FormulationSpec(
    name="hare-sched",
    kind="pyomo",
    build=build,
    extract=extract,
    summary="Hare_Sched (4)-(8): min total weighted completion, big-M disjunctive MILP",
    supports=too_large,
)
