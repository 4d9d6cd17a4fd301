"""Interference-aware placement of one scheduling interval (Harmony, ToN'22, Secs. IV-V) as a
MILP maximizing the per-interval reward of eq. (1) under the speed model of
:mod:`hetsched.harmony.problem` (N: all concurrent jobs; N_new: this interval's; S servers;
K resources; u^0, x^0: the earlier jobs' fixed placement).

    max  sum_{n in N} (b_n / e_n) f_n                                   reward (1): c_n = b_n f_n
    s.t. sum_s xw_{n,s} = W_n a_n,  sum_s xp_{n,s} = P_n a_n    n in N_new  whole_job (Sec. IV: all workers/PS or wait)
         sum_{n in N_new} (xw_{n,s} dw_{n,k} + xp_{n,s} dp_{n,k})
                              <= cap_{s,k} - used^0_{s,k}         all s, k  capacity (Sec. V.A: masked actions)
         xw_{n,s} + xp_{n,s} <= (W_n + P_n) u_{n,s},  u_{n,s} <= xw_{n,s} + xp_{n,s}    task_on_server (Sec. V.A d_n)
         z_{n,j,s} >= u_{n,s} + u_{j,s} - 1                              colocated (Sec. III, Case study 2)
         slow_n >= sum_{j != n} I_{n,j} z_{n,j,s}                 all n, s  worst_server (synchronous training, Sec. II.A)
         f_n <= 1 - slow_n - kappa_n (sum_s u_{n,s} - 1) + M_n h_n        speed (Sec. III, Case study 3: co-location
         f_n <= f_min + M_n (1 - h_n)                                       and cross-server traffic); f = max(...)
         f_n <= a_n                                                       placed_only (a waiting job trains nothing)
         a, u, h binary; xw, xp integer; z, slow >= 0; 0 <= f <= 1

M_n = max(1, sum_j I_{n,j} + kappa_n (|S| - 1)) makes the pair (speed, speed_floor) exactly
f_n <= max(f_min, 1 - slow_n - comm_n), which the maximization attains. The earlier jobs' u is
fixed (they cannot move) but their slowdown and speed are variables: new neighbours slow them.
The per-interval reward alone may prefer to keep an interfering new job waiting (a_n = 0).
Option ``place_all`` fixes a_n = 1 (Harmony's agent places every job while resources last,
Sec. V.A): the placement problem proper, infeasible when the jobs cannot all fit.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.exact.spec import FormulationSpec
from hetsched.harmony.problem import (
    FORMAT,
    Placement,
    check_placement,
    placement_from_dict,
    placement_view,
)
from hetsched.instance.model import Instance


def build(instance: Instance, place_all: bool = False) -> pe.ConcreteModel:
    v = placement_view(instance)
    N, S, K = range(v.n_jobs), range(v.n_servers), range(len(v.resources))
    new = [n for n in N if v.new[n]]
    u0 = (v.fixed_workers + v.fixed_ps) > 0
    weight = v.weight()
    big = {
        n: max(1.0, float(v.interference[n].sum() + v.communication[n] * (v.n_servers - 1)))
        for n in N
    }
    used0 = v.fixed_usage()

    m = pe.ConcreteModel(name=f"harmony_placement[{instance.name}]")
    m.N = pe.Set(initialize=N, doc="concurrent jobs")
    m.NEW = pe.Set(initialize=new, doc="jobs arriving in this interval")
    m.S = pe.Set(initialize=S, doc="servers")
    m.K = pe.Set(initialize=K, doc="resources")
    m.a = pe.Var(m.NEW, domain=pe.Binary, doc="a_n: new job n is placed this interval")
    m.xw = pe.Var(
        m.NEW,
        m.S,
        domain=pe.NonNegativeIntegers,
        bounds=lambda _, n, s: (0, int(v.workers[n])),
        doc="xw_{n,s}: workers of n on s",
    )
    m.xp = pe.Var(
        m.NEW,
        m.S,
        domain=pe.NonNegativeIntegers,
        bounds=lambda _, n, s: (0, int(v.parameter_servers[n])),
        doc="xp_{n,s}: parameter servers of n on s",
    )
    m.u_new = pe.Var(m.NEW, m.S, domain=pe.Binary, doc="u_{n,s}: new job n has a task on s")
    pairs = [
        (n, j, s)
        for n in N
        for j in N
        if j != n and v.interference[n, j] > 0 and (v.new[n] or v.new[j])
        for s in S
    ]
    m.P = pe.Set(initialize=pairs, dimen=3, doc="(n, j, s): j may slow n on s")
    m.z = pe.Var(m.P, bounds=(0, 1), doc="z_{n,j,s}: n and j share server s")
    m.slow = pe.Var(
        m.N, domain=pe.NonNegativeReals, doc="slow_n: interference on n's worst-hit server"
    )
    m.f = pe.Var(m.N, bounds=(0, 1), doc="f_n: speed as a fraction of standalone, c_n = b_n f_n")
    m.h = pe.Var(m.N, domain=pe.Binary, doc="h_n: 1 when the floor f_min is the larger term")

    def u(n, s):
        return m.u_new[n, s] if v.new[n] else int(u0[n, s])

    def shared(n, j, s):
        if (n, j, s) in m.P:
            return m.z[n, j, s]
        return int(u0[n, s] and u0[j, s])  # both jobs fixed

    m.reward = pe.Objective(
        expr=sum(float(weight[n]) * m.f[n] for n in N), sense=pe.maximize
    )  # eq. (1)
    m.whole_job_workers = pe.Constraint(
        m.NEW, rule=lambda _, n: sum(m.xw[n, s] for s in S) == int(v.workers[n]) * m.a[n]
    )  # Sec. IV
    m.whole_job_ps = pe.Constraint(
        m.NEW, rule=lambda _, n: sum(m.xp[n, s] for s in S) == int(v.parameter_servers[n]) * m.a[n]
    )  # Sec. IV
    m.capacity = pe.Constraint(
        m.S,
        m.K,
        rule=lambda _, s, k: (
            sum(
                m.xw[n, s] * float(v.worker_demand[n, k]) + m.xp[n, s] * float(v.ps_demand[n, k])
                for n in new
            )
            <= float(v.capacity[s, k] - used0[s, k])
            if new
            else pe.Constraint.Skip
        ),
    )  # Sec. V.A: actions beyond capacity are masked
    m.task_on_server = pe.Constraint(
        m.NEW,
        m.S,
        rule=lambda _, n, s: (
            m.xw[n, s] + m.xp[n, s] <= int(v.workers[n] + v.parameter_servers[n]) * m.u_new[n, s]
        ),
    )  # Sec. V.A d_n
    m.no_empty_server = pe.Constraint(
        m.NEW, m.S, rule=lambda _, n, s: m.u_new[n, s] <= m.xw[n, s] + m.xp[n, s]
    )  # Sec. V.A d_n
    m.colocated = pe.Constraint(
        m.P, rule=lambda _, n, j, s: m.z[n, j, s] >= u(n, s) + u(j, s) - 1
    )  # Sec. III Case study 2
    m.worst_server = pe.Constraint(
        m.N,
        m.S,
        rule=lambda _, n, s: (
            m.slow[n]
            >= sum(
                float(v.interference[n, j]) * shared(n, j, s)
                for j in N
                if j != n and v.interference[n, j] > 0
            )
        ),
    )  # Sec. II.A sync
    m.speed = pe.Constraint(
        m.N,
        rule=lambda _, n: (
            m.f[n]
            <= 1
            - m.slow[n]
            - float(v.communication[n]) * (sum(u(n, s) for s in S) - 1)
            + big[n] * m.h[n]
        ),
    )  # Sec. III Case study 3
    m.speed_floor = pe.Constraint(
        m.N, rule=lambda _, n: m.f[n] <= v.min_speed_fraction + big[n] * (1 - m.h[n])
    )  # Sec. III
    m.placed_only = pe.Constraint(
        m.NEW, rule=lambda _, n: m.f[n] <= m.a[n]
    )  # Sec. IV: a waiting job trains nothing
    if place_all:
        for n in new:
            m.a[n].fix(1)  # Sec. V.A: every new job is placed
    m.view = v
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> Placement:
    v = m.view
    xw = np.zeros((v.n_jobs, v.n_servers), dtype=int)
    xp = np.zeros_like(xw)
    for n in m.NEW:
        for s in m.S:
            xw[n, s] = int(round(value(m.xw[n, s])))
            xp[n, s] = int(round(value(m.xp[n, s])))
    return Placement.from_arrays(v, xw, xp)


SPEC = FormulationSpec(
    name="harmony-placement",
    kind="pyomo",
    build=build,
    extract=extract,
    validator=check_placement,
    sense="max",
    options=("place_all",),
    solution_format=FORMAT,
    load_solution=placement_from_dict,
    summary="Harmony (ToN'22) interval placement: max reward (1) under pairwise interference and cross-server traffic, MILP",
)
