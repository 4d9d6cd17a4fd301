"""Hare_Sched (Hare, HPDC'22, eqs. (4)-(8)) as a CP-SAT model: the independent second exact method.

One optional interval per (task, GPU) sharing the task's start x_i; ``exactly_one`` over the
presence literals is (5); ``no_overlap`` of the *training* intervals per GPU is (8) (sync may
overlap the GPU's next task); a round-end variable E_{n,r} >= x_i + T^c + T^s for i in D_r
with x_j >= E_{n,r} for j in D_{r+1} is (7); C_n = E_{n,last} is (6); x_i >= a_n is (4).

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

from dataclasses import replace

from ortools.sat.python import cp_model

from hetsched.errors import HetschedError
from hetsched.formulation import FormulationSpec
from hetsched.heuristics.list_scheduling import quick_upper_bound
from hetsched.instance.hare_view import hare_view
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.scaling import ceil_ticks, exact_decimal_scale
from hetsched.schedule import TaskAssignment, TaskSchedule
from hetsched.solvers.cpsat import CpsatProblem


def _in_ticks(instance: Instance, s: int) -> Instance:
    """The instance with every time replaced by ceil(time * s)."""
    def up(d):
        return {k: float(ceil_ticks(t, s)) for k, t in d.items()}
    jobs = tuple(replace(j, arrival=float(ceil_ticks(j.arrival, s)), train_time=up(j.train_time),
                         sync_time=up(j.sync_time), train_time_per_gpu=up(j.train_time_per_gpu),
                         sync_time_per_gpu=up(j.sync_time_per_gpu)) for j in instance.jobs)
    return replace(instance, jobs=jobs)


def _times(instance: Instance) -> list[float]:
    out = []
    for j in instance.jobs:
        out += [j.arrival, *j.train_time.values(), *j.sync_time.values(),
                *j.train_time_per_gpu.values(), *j.sync_time_per_gpu.values()]
    return out


def build(instance: Instance) -> CpsatProblem:
    scale = exact_decimal_scale(_times(instance), max_digits=4)
    exact = scale is not None
    s = scale or 1000
    ws = exact_decimal_scale([j.weight for j in instance.jobs], max_digits=6)
    if ws is None:
        raise HetschedError("cpsat needs job weights with at most 6 decimal digits; use --solver highs")
    ticked = _in_ticks(instance, s)
    v = hare_view(ticked)
    ub, hint = quick_upper_bound(ticked)
    earliest, latest = v.start_windows(ub)
    W = [int(round(w * ws)) for w in v.weight]
    Tc = [[int(t) for t in row] for row in v.train]
    Cy = [[int(t) for t in row] for row in v.cycle]

    model = cp_model.CpModel()
    x, p = {}, {}
    intervals = {g: [] for g in range(v.n_gpus)}
    for t in v.tasks():
        i = (t.n, t.r, t.k)
        x[i] = model.new_int_var(int(earliest[t.n, t.r]), int(latest[t.n, t.r] + 1e-6), f"x{i}")
        for g in range(v.n_gpus):
            p[i, g] = model.new_bool_var(f"y{i},{g}")
            intervals[g].append(model.new_optional_fixed_size_interval_var(x[i], Tc[t.n][g], p[i, g], f"train{i},{g}"))
        model.add_exactly_one(p[i, g] for g in range(v.n_gpus))  # (5)
    for g in range(v.n_gpus):
        model.add_no_overlap(intervals[g])  # (8)

    E = {}
    c_ub = v.completion_upper_bounds(ub)
    for n in range(v.n_jobs):
        R, K = int(v.rounds[n]), int(v.tasks_per_round[n])
        for r in range(R):
            E[n, r] = model.new_int_var(int(earliest[n, r]) + min(Cy[n]), int(c_ub[n] + 1e-6), f"E{n},{r}")
            for k in range(K):
                i = (n, r, k)
                model.add(E[n, r] >= x[i] + sum(Cy[n][g] * p[i, g] for g in range(v.n_gpus)))  # (6)/(7)
                if r > 0:
                    model.add(x[i] >= E[n, r - 1])  # (7)
                if k > 0:
                    model.add(x[(n, r, k - 1)] <= x[i])  # identical tasks of a round: non-decreasing starts
    model.minimize(sum(W[n] * E[n, int(v.rounds[n]) - 1] for n in range(v.n_jobs)))  # sum w_n C_n

    gpu_index = {gid: g for g, gid in enumerate(v.gpu_ids)}
    job_index = {jid: n for n, jid in enumerate(v.job_ids)}
    for a in hint.assignments:
        i = (job_index[a.job], a.round, a.task)
        model.add_hint(x[i], int(round(a.start)))
        for g in range(v.n_gpus):
            model.add_hint(p[i, g], g == gpu_index[a.gpu])

    notes = [f"times scaled by {s} to integer ticks" + ("" if exact else " (rounded up: not exact)")]
    slack = 0.0 if exact else float(sum(instance_w * (2 * v.n_tasks + 1) for instance_w in v.weight)) / s
    return CpsatProblem(model, objective_divisor=float(s * ws), bound_slack=slack, exact=exact, notes=notes,
                        data={"x": x, "p": p, "scale": s, "view": v})


def extract(problem: CpsatProblem, instance: Instance, value) -> TaskSchedule:
    x, p, s, v = (problem.data[k] for k in ("x", "p", "scale", "view"))
    out = []
    for (n, r, k), var in x.items():
        g = next(g for g in range(v.n_gpus) if value(p[(n, r, k), g]))
        out.append(TaskAssignment(v.job_ids[n], r, k, v.gpu_ids[g], value(var) / s))
    return TaskSchedule(tuple(out), instance.name, instance_hash(instance))


SPEC = FormulationSpec(
    name="hare-sched", kind="cpsat", build=build, extract=extract,
    summary="Hare_Sched (4)-(8) in CP-SAT: optional intervals, no-overlap per GPU, barrier precedences",
)
