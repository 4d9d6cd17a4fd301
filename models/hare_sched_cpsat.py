"""Hare_Sched (Hare, HPDC'22, eqs. (4)-(8)) as a CP-SAT model: the independent second exact method.

The tasks of one round of one job are identical, so instead of numbering them the model
decides how many run on each GPU: round r of job n has, on GPU m, slots s = 0..|D_r|-1 with a
presence literal p_{n,r,m,s} (slot s+1 used only if slot s is) and a start st_{n,r,m,s}
(slots of one GPU in start order). This is Hare_Sched with the task permutation symmetry
removed: any schedule maps to slots by sorting each GPU's tasks of the round by start.

    sum_{m,s} p_{n,r,m,s} = |D_r|                            (5) every task on one GPU
    no_overlap of the training intervals [st, st + T^c) per GPU  (8) sync may overlap
    E_{n,r} >= st + T^c_{n,m} + T^s_{n,m}  if p_{n,r,m,s}        (6)/(7) round end
    st_{n,r+1,m,s} >= E_{n,r}                                 (7) barrier
    st_{n,0,m,s} >= a_n                                       (4) arrival
    min sum_n w_n E_{n,last}                                  objective, C_n = E_{n,last}

Integer ticks. Times are multiplied by the least 10^d (d <= 4) that makes every arrival,
training and synchronization time an integer; then the optimum is exactly the optimum of
the real problem (divided back). If no such d exists, times are rounded *up* at d = 3:
the schedule found stays feasible for the real times (the validator recomputes its true
cost), and the bound is lowered by sum_n w_n (2|D| + 1) / 10^3 -- rounding stretches every
task by < 2 ticks and the arrival by < 1 tick, so the real optimum's sequence, replayed on
rounded times, finishes each job at most (2|D|+1) ticks later -- and the status is never
``optimal``. Weights are scaled the same way (they must be exact at <= 6 decimals).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Collection

from ortools.sat.python import cp_model

from hetsched.core.errors import HetschedError
from hetsched.core.scaling import exact_decimal_scale, instance_in_ticks, instance_times
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.upper_bound import Horizon, hint_in_ticks, horizon
from hetsched.hare.view import hare_view
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule, schedule_from_round_starts
from hetsched.solvers.cpsat import CpsatProblem

MAX_INTERVALS = 2_000_000  # optional intervals (tasks x GPUs) CP-SAT is given at most


def too_large(instance: Instance) -> str | None:
    """Why the instance is too large for this model (None: it is not), estimated before building."""
    n = instance.n_tasks * len(instance.gpus)
    if n > MAX_INTERVALS:
        return f"it would need {n} optional intervals (tasks x GPUs; limit {MAX_INTERVALS})"
    return None


def build(
    instance: Instance, hint: TaskSchedule | None = None, frozen: Collection[str] = ()
) -> CpsatProblem:
    """The CP-SAT model; ``hint``: a schedule of ``instance`` (from Python, e.g. the portfolio's
    best so far) that sets the windows and the solver's hint when better than the list schedules'.

    ``frozen``: ids of jobs whose tasks stay where ``hint`` has them (a neighbourhood of the
    large-neighbourhood search, :mod:`hetsched.hare.lns`): their training intervals are fixed
    on their GPUs, so the model's optimum and bound are the neighbourhood's, not the instance's
    (which is why ``solve()`` does not take this option)."""
    scale = exact_decimal_scale(instance_times(instance), max_digits=4)
    exact = scale is not None
    s = scale or 1000
    ws = exact_decimal_scale([j.weight for j in instance.jobs], max_digits=6)
    if ws is None:
        raise HetschedError(
            "cpsat needs job weights with at most 6 decimal digits; use --solver highs"
        )
    ticked = instance_in_ticks(instance, s)
    h = _neighbourhood(ticked, hint, s) if frozen else horizon(ticked, hint=hint, scale=s)
    v, hint, earliest, latest, c_ub = h.view, h.schedule, h.earliest, h.latest, h.completion
    L = [int(round(x)) for x in v.round_length]
    W = [int(round(w * ws)) for w in v.weight]
    Tc = [[int(t) for t in row] for row in v.train]
    Cy = [[int(t) for t in row] for row in v.cycle]

    model = cp_model.CpModel()
    st, p, E = {}, {}, {}
    intervals = defaultdict(list)
    job_index = {jid: n for n, jid in enumerate(v.job_ids)}
    gpu_index = {gid: g for g, gid in enumerate(v.gpu_ids)}
    fixed = {job_index[j] for j in frozen}
    kept = defaultdict(list)  # (n, r) -> (start, GPU) of the frozen jobs' tasks, in ticks
    for a in hint.assignments:
        n, g = job_index[a.job], gpu_index[a.gpu]
        if n in fixed:
            start = int(round(a.start))
            kept[n, a.round].append((start, g))
            intervals[g].append(model.new_fixed_size_interval_var(start, Tc[n][g], "kept"))
    done = {n: max(t + Cy[n][g] for t, g in kept[n, int(v.rounds[n]) - 1]) for n in fixed}
    for n in range(v.n_jobs):
        if n in fixed:
            continue
        R, K = int(v.rounds[n]), int(v.tasks_per_round[n])
        for r in range(R):
            lo, hi = int(earliest[n, r]), int(latest[n, r] + 1e-6)
            e_hi = int(c_ub[n] + 1e-6) if r == R - 1 else int(latest[n, r + 1] + 1e-6)
            E[n, r] = model.new_int_var(lo + L[n], e_hi, f"E[{n},{r}]")
            for g in range(v.n_gpus):
                for k in range(K):
                    i = (n, r, g, k)
                    st[i] = model.new_int_var(lo, hi, f"st{i}")
                    p[i] = model.new_bool_var(f"p{i}")
                    intervals[g].append(
                        model.new_optional_fixed_size_interval_var(
                            st[i], Tc[n][g], p[i], f"train{i}"
                        )
                    )
                    model.add(E[n, r] >= st[i] + Cy[n][g]).only_enforce_if(
                        p[i]
                    )  # (6)/(7): round end
                    if r > 0:
                        model.add(st[i] >= E[n, r - 1])  # (7) barrier
                    if k > 0:  # slots of one GPU are used in order, in start order
                        model.add_implication(p[i], p[n, r, g, k - 1])
                        model.add(st[i] >= st[n, r, g, k - 1] + Tc[n][g]).only_enforce_if(p[i])
            model.add(sum(p[n, r, g, k] for g in range(v.n_gpus) for k in range(K)) == K)  # (5)
            if r > 0:
                model.add(E[n, r] >= E[n, r - 1] + L[n])  # redundant: a round lasts at least L_n
    for g in range(v.n_gpus):
        model.add_no_overlap(intervals[g])  # (8)
    model.minimize(  # sum w_n C_n
        sum(W[n] * E[n, int(v.rounds[n]) - 1] for n in range(v.n_jobs) if n not in fixed)
        + sum(W[n] * done[n] for n in fixed)
    )

    # the list schedule as a hint: each GPU's tasks of a round, by start, fill its slots
    used = defaultdict(list)
    for a in hint.assignments:
        used[job_index[a.job], a.round, gpu_index[a.gpu]].append(int(round(a.start)))
    for (n, r, g, k), var in st.items():
        starts = sorted(used.get((n, r, g), []))
        model.add_hint(p[n, r, g, k], k < len(starts))
        if k < len(starts):
            model.add_hint(var, starts[k])

    notes = [
        f"times scaled by {s} to integer ticks" + ("" if exact else " (rounded up: not exact)")
    ]
    slack = 0.0 if exact else float(sum(w * (2 * v.n_tasks + 1) for w in v.weight)) / s
    return CpsatProblem(
        model,
        objective_divisor=float(s * ws),
        bound_slack=slack,
        exact=exact,
        notes=notes,
        data={"st": st, "p": p, "scale": s, "view": v, "kept": kept},
    )


def _neighbourhood(ticked: Instance, hint: TaskSchedule | None, scale: int) -> Horizon:
    """The horizon of the hint itself (in ticks), whose frozen jobs stay where it has them: the
    windows hold for every schedule at most as costly as the hint."""
    given = None if hint is None else hint_in_ticks(ticked, hint, scale)
    if given is None:
        raise HetschedError("frozen jobs need a hint, a valid schedule of the instance, to keep")
    return Horizon(hare_view(ticked), given[0], given[1])


def extract(problem: CpsatProblem, instance: Instance, value) -> TaskSchedule:
    """Tasks of a round are numbered in start order (ties by GPU) over its used slots."""
    st, p, s, v = (problem.data[k] for k in ("st", "p", "scale", "view"))
    rounds = defaultdict(list)
    for key, kept in problem.data.get("kept", {}).items():  # the frozen jobs' tasks
        rounds[key] = [(t / s, g) for t, g in kept]
    for (n, r, g, k), var in st.items():
        if value(p[n, r, g, k]):
            rounds[n, r].append((value(var) / s, g))
    return schedule_from_round_starts(v, rounds, instance.name, instance_hash(instance))


SPEC = FormulationSpec(
    name="hare-sched",
    kind="cpsat",
    build=build,
    extract=extract,
    summary="Hare_Sched (4)-(8) in CP-SAT: per-GPU slots of each round, no-overlap per GPU, barrier precedences",
    supports=too_large,
    options=("hint",),
)
