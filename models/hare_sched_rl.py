"""Hare_Sched_RL (Hare, HPDC'22, Sec. 5.2, eq. (9)): Hare_Sched with (8) replaced by a
per-GPU valid inequality.

    min  sum_n w_n C_n
    s.t. (4) arrival, (5) one_gpu, (6) completion, (7) barrier       as in Hare_Sched
         sum_i y_{i,m} T^c_{i,m} (x_i + T^c_{i,m})
             >= 1/2 [ (sum_i y_{i,m} T^c_{i,m})^2 + sum_i (y_{i,m} T^c_{i,m})^2 ]   for all m   (9)

(9) is Queyranne's inequality sum_j p_j C_j >= 1/2 [(sum p_j)^2 + sum p_j^2] for the tasks a
GPU trains one at a time, so every feasible schedule satisfies it and the optimum is a lower
bound of Hare_Sched (the formulation's ``objective_is_bound``).

**Exact linearization** (``build``, solved by HiGHS). As y is binary, y^2 = y, and expanding
(9) and cancelling sum_i y_{i,m} (T^c_{i,m})^2 on both sides gives the equivalent

    sum_i T^c_{i,m} u_{i,m}  >=  sum_{i<j} T^c_{i,m} T^c_{j,m} v_{i,j,m}        (9')  rl_queyranne
    u_{i,m} = y_{i,m} x_i,   v_{i,j,m} = y_{i,m} y_{j,m}.

u appears only on the larger side with a positive coefficient and v only on the smaller side,
so one side of each product's McCormick envelope is enough and is exact for binary y:

    u_{i,m} <= hi_i y_{i,m}               (rl_u_off: u = 0 off GPU m)
    u_{i,m} <= x_i - lo_i (1 - y_{i,m})    (rl_u_on:  u <= x_i on GPU m)
    v_{i,j,m} >= y_{i,m} + y_{j,m} - 1,  v >= 0      (rl_v)

Any (u, v) satisfying these has u <= y x and v >= y y, so (9') implies (9); and u = y x,
v = y y satisfy them, so nothing feasible is cut. Two implied families tighten the LP relaxation
(the MILP's optimum is unchanged; on 20-40 tasks they turn some 40 s timeouts into 1-5 s solves):

    sum_m u_{i,m} = x_i                                                     (rl_u_split)
    sum_{i<j} T_i T_j v_{i,j,m} >= a L_m - a^2/2 - 1/2 sum_i T_i^2 y_{i,m}     (rl_tangent)

with L_m = sum_i T_i y_{i,m} and a at 16 points of [0, sum_i T_i]: for binary y the left side
is 1/2 (L_m^2 - sum T_i^2 y_{i,m}), and L^2 >= 2aL - a^2. The bounds [lo_i, hi_i] on x_i are the
relaxed start windows (:meth:`HareView.start_windows` with ``relaxed=True``): from (4), (6),
(7) alone every solution has x_i >= a_n + r min_m(T^c+T^s), and every solution with objective
<= UB (a list schedule's cost, >= OPT >= the RL optimum) has x_i <= hi_i, because x_i plus the
remaining rounds is <= C_n. So the windows contain every optimal solution of Hare_Sched_RL.

Two valid reductions, neither changes the optimum: ``identical_task_order`` (the tasks of a
round are interchangeable, so x may be taken non-decreasing in k) and ``completion_chain``
(C_n >= x_i + busy_i + (|R_n| - r - 1) min_m (T^c + T^s)).

``build_quadratic`` keeps (9) literally, as a mixed-integer quadratically constrained program
for solvers that take one (HiGHS does not); the tests check that both forms accept the same
points.
"""

from __future__ import annotations

import pyomo.environ as pe

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.upper_bound import horizon
from hetsched.instance.model import Instance
from hetsched.models.hare_sched import solver_starts as hare_sched_extract


def base_model(instance: Instance) -> pe.ConcreteModel:
    """(4)-(7), the objective, the windows and the two reductions: everything but (9)."""
    h = horizon(instance, relaxed=True)
    v, ub, earliest, latest = h.view, h.ub, h.earliest, h.latest
    # keep round-off from cutting a solution at a window edge; wide enough that HiGHS presolve does
    # not see near-fixed columns (a 1e-6 window made it report a 1e-6-infeasible "optimum" as an error)
    slack = 1e-5 * max(1.0, ub)
    tasks = [(t.n, t.r, t.k) for t in v.tasks()]
    Tc, Ts = v.pair_times()

    m = pe.ConcreteModel(name=f"hare_sched_rl[{instance.name}]")
    m.N = pe.Set(initialize=range(v.n_jobs), doc="jobs")
    m.M = pe.Set(initialize=range(v.n_gpus), doc="GPUs")
    m.D = pe.Set(initialize=tasks, dimen=3, doc="tasks i = (n, r, k)")
    m.Tc = pe.Param(m.N, m.M, initialize=Tc, doc="T^c_{i,m} (per job)")
    m.Ts = pe.Param(m.N, m.M, initialize=Ts, doc="T^s_{i,m} (per job)")
    m.lo = pe.Param(
        m.D, initialize={i: float(earliest[i[0], i[1]]) for i in tasks}, doc="earliest x_i"
    )
    m.hi = pe.Param(
        m.D, initialize={i: float(latest[i[0], i[1]]) + slack for i in tasks}, doc="latest x_i"
    )

    m.x = pe.Var(m.D, bounds=lambda _, *i: (m.lo[i], m.hi[i]), doc="start time x_i")
    m.y = pe.Var(m.D, m.M, domain=pe.Binary, doc="y_{i,m}: task i runs on GPU m")
    c_lb = v.completion_lower_bounds(relaxed=True)
    c_ub = h.completion
    m.C = pe.Var(
        m.N, bounds=lambda _, n: (float(c_lb[n]), float(c_ub[n]) + slack), doc="completion C_n"
    )

    def busy(i):  # sum_m y_{i,m} (T^c_{i,m} + T^s_{i,m})
        return sum(m.y[i, g] * (m.Tc[i[0], g] + m.Ts[i[0], g]) for g in m.M)

    m.total_weighted_completion = pe.Objective(
        expr=sum(float(v.weight[n]) * m.C[n] for n in m.N)
    )  # (9) objective
    m.arrival = pe.Constraint(m.D, rule=lambda _, *i: m.x[i] >= float(v.arrival[i[0]]))  # (4)
    m.one_gpu = pe.Constraint(m.D, rule=lambda _, *i: sum(m.y[i, g] for g in m.M) == 1)  # (5)
    m.completion = pe.Constraint(m.D, rule=lambda _, *i: m.C[i[0]] >= m.x[i] + busy(i))  # (6)
    m.barrier = pe.Constraint(  # (7)
        [(i, j) for i in tasks for j in tasks if j[0] == i[0] and j[1] == i[1] + 1],
        rule=lambda _, *ij: m.x[ij[3:]] >= m.x[ij[:3]] + busy(ij[:3]),
    )
    cyc = v.min_cycle
    m.completion_chain = pe.Constraint(
        [i for i in tasks if i[1] < int(v.rounds[i[0]]) - 1],
        rule=lambda _, *i: (
            m.C[i[0]] >= m.x[i] + busy(i) + (int(v.rounds[i[0]]) - 1 - i[1]) * float(cyc[i[0]])
        ),
    )
    m.identical_task_order = pe.Constraint(
        [(i, j) for i in tasks for j in tasks if j[:2] == i[:2] and j[2] == i[2] + 1],
        rule=lambda _, *p: m.x[p[:3]] <= m.x[p[3:6]],
    )
    return m


def add_products(m: pe.ConcreteModel) -> None:
    """u_{i,m} = y_{i,m} x_i and v_{i,j,m} = y_{i,m} y_{j,m} through their exact one-sided envelopes."""
    pairs = [(i, j) for i in m.D for j in m.D if i < j]
    m.P = pe.Set(initialize=pairs, dimen=6, doc="unordered task pairs i < j")
    m.u = pe.Var(m.D, m.M, domain=pe.NonNegativeReals, doc="u_{i,m} = y_{i,m} x_i (>= 0 as x >= 0)")
    m.v = pe.Var(m.P, m.M, bounds=(0, 1), doc="v_{i,j,m} = y_{i,m} y_{j,m}")
    m.rl_u_off = pe.Constraint(m.D, m.M, rule=lambda _, *p: m.u[p] <= m.hi[p[:3]] * m.y[p])
    m.rl_u_on = pe.Constraint(
        m.D, m.M, rule=lambda _, *p: m.u[p] <= m.x[p[:3]] - m.lo[p[:3]] * (1 - m.y[p])
    )
    m.rl_v = pe.Constraint(
        m.P, m.M, rule=lambda _, *p: m.v[p] >= m.y[p[:3], p[6]] + m.y[p[3:6], p[6]] - 1
    )  # (9): v = y_i y_j
    # Two families that every integer point satisfies (so the optimum is unchanged) and that
    # strengthen the LP relaxation HiGHS branches on: u splits x over the GPUs (sum_m y = 1), and
    # sum_{i<j} T_i T_j y_i y_j = 1/2 (L^2 - sum T_i^2 y_i) with L = sum T_i y_i is at least its
    # tangent at a: a L - a^2/2 - 1/2 sum T_i^2 y_i, for TANGENTS points a over [0, sum T_i].
    m.rl_u_split = pe.Constraint(  # (9) with (5): implied
        m.D, rule=lambda _, *i: sum(m.u[i, g] for g in m.M) == m.x[i]
    )
    points = [(g, k / TANGENTS) for g in m.M for k in range(1, TANGENTS + 1)]
    m.rl_tangent = pe.Constraint(  # (9): implied
        range(len(points)), rule=lambda _, t: _tangent(m, *points[t])
    )


TANGENTS = 16  # tangent points of the load square per GPU (rl_tangent)


def _tangent(m: pe.ConcreteModel, g: int, share: float):
    """sum_{i<j} T_i T_j v_ij >= a L - a^2/2 - 1/2 sum T_i^2 y_i at a = share * sum_i T_i."""
    a = share * sum(m.Tc[i[0], g] for i in m.D)
    load = sum(m.Tc[i[0], g] * m.y[i, g] for i in m.D)
    squares = sum(m.Tc[i[0], g] ** 2 * m.y[i, g] for i in m.D)
    pairs = sum(m.Tc[p[0], g] * m.Tc[p[3], g] * m.v[p, g] for p in m.P)
    return pairs >= a * load - a * a / 2 - squares / 2


MAX_PRODUCTS = 2_000_000  # v_{i,j,m} variables: |D|(|D|-1)/2 |M|


def check_size(instance: Instance, name: str, per_pair: int = 1) -> None:
    """Refuse (before building) a model with more than MAX_PRODUCTS pair variables: ``per_pair``
    per unordered task pair and GPU (v; the extended subset model adds two shares d)."""
    n_tasks = sum(j.n_tasks for j in instance.jobs)
    products = per_pair * (n_tasks * (n_tasks - 1) // 2) * len(instance.gpus)
    if products > MAX_PRODUCTS:
        raise HetschedError(
            f"{name} needs {products:,} pair variables for {n_tasks} tasks on "
            f"{len(instance.gpus)} GPUs (limit {MAX_PRODUCTS:,}); use the order or model "
            "hare-interval-lp at this scale"
        )


def build(instance: Instance) -> pe.ConcreteModel:
    """Hare_Sched_RL with (9) linearized exactly (see the module docstring): a MILP for HiGHS."""
    check_size(instance, "hare-sched-rl")
    m = base_model(instance)
    add_products(m)
    m.rl_queyranne = pe.Constraint(
        m.M,
        rule=lambda _, g: (  # (9')
            sum(m.Tc[i[0], g] * m.u[i, g] for i in m.D)
            >= sum(m.Tc[p[0], g] * m.Tc[p[3], g] * m.v[p, g] for p in m.P)
        ),
    )
    return m


def build_quadratic(instance: Instance) -> pe.ConcreteModel:
    """Hare_Sched_RL with (9) as printed: a MIQCP for solvers that accept quadratic constraints."""
    m = base_model(instance)

    def eq9(_, g):
        load = sum(m.y[i, g] * m.Tc[i[0], g] for i in m.D)
        lhs = sum(m.y[i, g] * m.Tc[i[0], g] * (m.x[i] + m.Tc[i[0], g]) for i in m.D)
        return lhs >= 0.5 * (load**2 + sum((m.y[i, g] * m.Tc[i[0], g]) ** 2 for i in m.D))

    m.rl_queyranne = pe.Constraint(m.M, rule=eq9)  # (9)
    return m


# The relaxed solution (x^, y^) reads like Hare_Sched's (same x, y, D, M); it is usually infeasible
# for Hare_Sched (tasks may overlap on a GPU), and Algorithm 1 reads its starts x^_i.
extract = hare_sched_extract


SPEC = FormulationSpec(
    name="hare-sched-rl",
    kind="pyomo",
    build=build,
    extract=extract,
    objective_is_bound=True,
    summary="Hare_Sched_RL (4)-(7),(9): Queyranne relaxation of (8), exact MILP linearization; a lower bound",
)
