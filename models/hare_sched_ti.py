"""Hare_Sched (Hare, HPDC'22, eqs. (4)-(8)) as a time-indexed MILP over integer ticks.

The same problem as :mod:`hare_sched`, written so that its LP relaxation is strong (the
classical time-indexed bound for weighted completion time) and without task symmetry: the
tasks of a round are identical, so the model counts starts instead of naming tasks.

    z_{n,r,m,t} = 1: a task of round r of job n starts training on GPU m at tick t
    F_{n,r,t}   = 1: round r of job n has fully trained and synced by tick t (monotone in t)

    sum_{m,t} z_{n,r,m,t} = |D_r|                                         (5) one_gpu
    sum_{n,r} sum_{t-T^c_{n,m} < t' <= t} z_{n,r,m,t'} <= 1   for all m, t  (8) no_overlap
    |D_r| F_{n,r,t} <= sum_m sum_{t' <= t - T^c_{n,m} - T^s_{n,m}} z_{n,r,m,t'} (6)/(7) round_done
    z_{n,r+1,m,t} <= F_{n,r,t}                                            (7) barrier
    z_{n,0,m,t} = 0 for t < a_n                                            (4) arrival (domain)
    C_n = t_hi - sum_{t_lo <= t < t_hi} F_{n,last,t}                       (6) completion
    min sum_n w_n C_n

Exactness: with integer ticks every semi-active schedule starts on integer ticks, so the
grid loses nothing. Times are scaled by the least 10^d (d <= 4) that makes them integers;
if none exists the model refuses (use ``hare-sched``). The start windows come from a list
schedule's objective (:meth:`HareView.start_windows`), so every optimal schedule fits.
Size grows with the horizon in ticks: this is for small and medium instances.
"""

from __future__ import annotations

import math

import pyomo.environ as pe

from hetsched.core.errors import HetschedError
from hetsched.core.scaling import exact_decimal_scale, instance_in_ticks, instance_times
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.upper_bound import horizon
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule, schedule_from_round_starts

MAX_START_VARIABLES = 2_000_000


def build(instance: Instance) -> pe.ConcreteModel:
    s = exact_decimal_scale(instance_times(instance), max_digits=4)
    if s is None:
        raise HetschedError(
            "hare-sched-ti needs times with at most 4 decimal digits; use --model hare-sched"
        )
    ticked = instance_in_ticks(instance, s)
    h = horizon(ticked)
    v, earliest, latest, c_ub = h.view, h.earliest, h.latest, h.completion
    Tc = [[int(x) for x in row] for row in v.train]
    Cy = [[int(x) for x in row] for row in v.cycle]
    K = [int(k) for k in v.tasks_per_round]
    rounds = [(n, r) for n in range(v.n_jobs) for r in range(int(v.rounds[n]))]
    start = {(n, r): math.ceil(earliest[n, r] - 1e-6) for n, r in rounds}
    stop = {(n, r): math.floor(latest[n, r] + 1e-6) for n, r in rounds}  # inclusive
    L = v.round_length
    # a task of round r may start on GPU g only if it can still end in time: t + T^c + T^s plus the
    # later rounds (L_n each) <= the bound on C_n, which every schedule within the UB meets
    stop_on = {
        (n, r, g): min(
            stop[n, r], math.floor(c_ub[n] - Cy[n][g] - (int(v.rounds[n]) - 1 - r) * L[n] + 1e-6)
        )
        for n, r in rounds
        for g in range(v.n_gpus)
    }
    size = sum(
        max(0, stop_on[n, r, g] - start[n, r] + 1) for n, r in rounds for g in range(v.n_gpus)
    )
    if size > MAX_START_VARIABLES:  # counted before anything is built
        raise HetschedError(
            f"hare-sched-ti would need {size} start variables (horizon too long in ticks of "
            f"1/{s} s); use --model hare-sched or --solver cpsat"
        )
    Z = [
        (n, r, g, t)
        for n, r in rounds
        for g in range(v.n_gpus)
        for t in range(start[n, r], stop_on[n, r, g] + 1)
    ]
    # F_{n,r,t} lives where it can change: from the earliest end of the round to the latest start of the next
    f_lo = {(n, r): start[n, r] + min(Cy[n]) for n, r in rounds}
    f_hi = {
        (n, r): (stop[n, r + 1] if r + 1 < int(v.rounds[n]) else math.floor(c_ub[n] + 1e-6))
        for n, r in rounds
    }
    Fidx = [(n, r, t) for n, r in rounds for t in range(f_lo[n, r], f_hi[n, r] + 1)]

    m = pe.ConcreteModel(name=f"hare_sched_ti[{instance.name}]")
    m.Z = pe.Set(initialize=Z, dimen=4)
    m.Fidx = pe.Set(initialize=Fidx, dimen=3)
    m.z = pe.Var(m.Z, domain=pe.Binary, doc="a task of round r of job n starts on GPU m at tick t")
    m.F = pe.Var(m.Fidx, domain=pe.Binary, doc="round r of job n has trained and synced by tick t")

    def F(n, r, t):  # 0 before the window, 1 after it
        return 0 if t < f_lo[n, r] else (1 if t > f_hi[n, r] else m.F[n, r, t])

    last = {n: int(v.rounds[n]) - 1 for n in range(v.n_jobs)}
    m.C = pe.Expression(
        range(v.n_jobs),
        rule=lambda _, n: (
            (f_hi[n, last[n]] + 1)
            - sum(m.F[n, last[n], t] for t in range(f_lo[n, last[n]], f_hi[n, last[n]] + 1))
        ),
        doc="C_n in ticks",
    )
    m.total_weighted_completion = pe.Objective(
        expr=sum(float(v.weight[n]) * m.C[n] for n in range(v.n_jobs)) / s
    )  # Sec. 5.1

    m.one_gpu = pe.Constraint(
        rounds,
        rule=lambda _, n, r: (
            sum(
                m.z[n, r, g, t]
                for g in range(v.n_gpus)
                for t in range(start[n, r], stop_on[n, r, g] + 1)
            )
            == K[n]
        ),
    )  # (5)

    by_gpu: dict[int, list] = {g: [] for g in range(v.n_gpus)}
    for n, r, g, t in Z:
        by_gpu[g].append((n, r, t))
    ticks = {
        g: range(
            min((t for _, _, t in by_gpu[g]), default=0),
            max((t + Tc[n][g] for n, _, t in by_gpu[g]), default=0),
        )
        for g in by_gpu
    }

    def no_overlap(_, g, t):  # (8): at most one task trains on GPU g during tick [t, t+1)
        terms = [
            m.z[n, r, g, t0]
            for n, r in rounds
            for t0 in range(max(start[n, r], t - Tc[n][g] + 1), min(stop_on[n, r, g], t) + 1)
        ]
        return sum(terms) <= 1 if len(terms) > 1 else pe.Constraint.Skip

    m.no_overlap = pe.Constraint([(g, t) for g in by_gpu for t in ticks[g]], rule=no_overlap)

    def round_done(
        _, n, r, t
    ):  # (6)/(7): F = 1 only when all |D_r| tasks have trained and synced by t
        done = sum(
            m.z[n, r, g, t0]
            for g in range(v.n_gpus)
            for t0 in range(start[n, r], min(stop_on[n, r, g], t - Cy[n][g]) + 1)
        )
        return K[n] * m.F[n, r, t] <= done

    m.round_done = pe.Constraint(m.Fidx, rule=round_done)
    m.monotone = pe.Constraint(
        [(n, r, t) for n, r, t in Fidx if t < f_hi[n, r]],
        rule=lambda _, n, r, t: m.F[n, r, t] <= m.F[n, r, t + 1],
    )  # a round stays finished
    m.barrier = pe.Constraint(
        [i for i in Z if i[1] > 0],  # (7)
        rule=lambda _, n, r, g, t: m.z[n, r, g, t] <= F(n, r - 1, t),
    )
    m._hetsched = {"scale": s, "view": v}
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> TaskSchedule:
    s, v = m._hetsched["scale"], m._hetsched["view"]
    used: dict[tuple[int, int], list] = {}
    for n, r, g, t in m.Z:
        if value(m.z[n, r, g, t]) > 0.5:
            used.setdefault((n, r), []).append((t / s, g))
    return schedule_from_round_starts(v, used, instance.name, instance_hash(instance))


SPEC = FormulationSpec(
    name="hare-sched-ti",
    kind="pyomo",
    build=build,
    extract=extract,
    summary="Hare_Sched (4)-(8) time-indexed over integer ticks: strong LP bound, no task symmetry",
)
