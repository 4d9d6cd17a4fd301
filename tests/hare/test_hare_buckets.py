"""The bucketed job-schedule master of Hare_Sched (``models/hare_sched_buckets.py``) and its
lower-bounding pricing (``hetsched/hare/bucket_pricing.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.errors import HetschedError
from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import solve
from hetsched.hare.dead_gaps import dead_gaps
from hetsched.hare.ticks import job_tasks, ticked_horizon
from hetsched.instance.generators import hare_table2, ladder
from hetsched.solvers.colgen.master import lp_relaxation
from hetsched.solvers.colgen.problem import usage_price
from hetsched.solvers.result import Status
from hetsched.testing.strategies import hare_instances


def _class_of(view) -> np.ndarray:
    out = np.empty(view.n_gpus, dtype=np.int64)
    for c, gpus in enumerate(view.gpu_classes()):
        out[gpus] = c
    return out


def _job_schedule_ok(view, n: int, tasks, completion: int) -> bool:
    """Job n's tasks form a schedule of the job alone: K tasks a round, rounds after the
    previous one's end (7), tasks on one GPU apart (8), and C_n its last round's end."""
    K, R = int(view.tasks_per_round[n]), int(view.rounds[n])
    ready = int(view.arrival[n])
    for r in range(R):
        mine = sorted((g, t) for rr, g, t in tasks if rr == r)
        if len(mine) != K or any(t < ready for _, t in mine):
            return False
        for (g1, t1), (g2, t2) in zip(mine, mine[1:]):
            if g1 == g2 and t2 < t1 + view.train[n, g1]:
                return False
        ready = max(t + int(view.train[n, g] + view.sync[n, g]) for g, t in mine)
    return ready == completion


@settings(max_examples=25, deadline=None)
@given(
    hare_instances(max_jobs=3, max_tasks=8, max_rounds=3, max_tasks_per_round=3),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
)
def test_the_bucket_pricing_bounds_the_exact_pricing_from_below(inst, bucket, seed):
    """At any class-bucket prices, each job's value is at most its least priced schedule (the
    per-tick DP of ``hare-sched`` at the same prices, tick by tick), and each schedule it
    returns is a real one of the job whose exact price is at least the value."""
    bk = find_formulation("hare-sched-buckets", "colgen").build(inst, bucket=bucket)
    dw = find_formulation("hare-sched", "colgen").build(inst, prove=True)
    view = bk.data["view"]
    C, nb = len(view.gpu_classes()), len(bk.capacity) // len(view.gpu_classes())
    rng = np.random.default_rng(seed)
    pi = rng.choice([0.0, 0.0, 0.5, 3.0], size=(C, nb)) * rng.random((C, nb))
    H = len(dw.capacity) // view.n_gpus
    per_tick = np.repeat(pi, bucket, axis=1)[:, :H][_class_of(view)]
    if per_tick.shape[1] < H:  # the same horizon in both: the windows come from one search
        per_tick = np.pad(per_tick, ((0, 0), (0, H - per_tick.shape[1])))
    exact_prices = dw.prepare(per_tick.ravel())
    for n in range(view.n_jobs):
        value, columns = bk.price(n, bk.prepare(pi.ravel()))
        exact, _ = dw.price(n, exact_prices)
        assert value <= exact + 1e-6 * max(1.0, abs(exact))
        assert columns
        for col in columns:
            completion = round(
                col.cost / bk.objective_divisor * bk.data["scale"] / inst.jobs[n].weight
            )
            assert _job_schedule_ok(view, n, col.payload, completion)
            assert col.cost + usage_price(col, pi.ravel()) >= value - 1e-6 * max(1.0, abs(value))


@settings(max_examples=15, deadline=None)
@given(hare_instances(max_jobs=4, max_tasks=8), st.integers(1, 3), st.booleans())
def test_the_bucketed_bound_lies_between_the_interval_lp_start_and_the_optimum(
    inst, bucket, dead_gaps
):
    """The master's Lagrangian bound is at most CP-SAT's proven optimum; its schedule is the one
    it started from, validated; it says optimal only where its bound meets that schedule. With
    its columns charged with their dead gaps too."""
    res = solve(
        inst,
        "hare-sched-buckets",
        "colgen",
        time_limit=60,
        options={"bucket": bucket, "dead_gaps": dead_gaps},
    )
    optimum = solve(inst, "hare-sched", "cpsat", time_limit=60)
    assert optimum.status == Status.OPTIMAL
    assert res.validation is not None and res.validation.valid
    assert res.bound is not None and res.bound <= optimum.objective + 1e-6
    assert res.objective >= optimum.objective - 1e-6
    if res.status == Status.OPTIMAL:
        assert res.objective == pytest.approx(optimum.objective)


@settings(max_examples=10, deadline=None)
@given(hare_instances(max_jobs=1, max_tasks=8, max_rounds=3, max_tasks_per_round=3))
def test_one_job_alone_is_proven_at_its_earliest_completion(inst):
    """With one job the rows never bind: the bound is w (a + R L), its rounds back to back at
    their least length (the closed form of (4), (6), (7)), and the schedule meets it."""
    (job,) = inst.jobs
    res = solve(inst, "hare-sched-buckets", "colgen", time_limit=60)
    problem = find_formulation("hare-sched-buckets", "colgen").build(inst)
    view = problem.data["view"]
    closed = job.weight * float(view.completion_lower_bounds()[0]) / problem.data["scale"]
    assert res.status == Status.OPTIMAL
    assert res.bound == pytest.approx(closed) and res.objective == pytest.approx(closed)


def test_the_root_stops_at_its_limit_with_a_valid_bound():
    """A root cut short keeps the best Lagrangian bound so far, below the master LP's value."""
    inst = ladder(16, 4, seed=0)
    problem = find_formulation("hare-sched-buckets", "colgen").build(inst)
    problem.max_iterations = 2
    run, _, _ = lp_relaxation(problem)
    assert run.end == "rounds" and run.lp is not None
    assert problem.lower_bound <= run.bound <= run.lp + 1e-6 * abs(run.lp)


@pytest.mark.parametrize("bucket", [0, -3, 2.5, True, "10"])
def test_a_bucket_that_is_not_a_positive_whole_number_of_ticks_is_refused(bucket):
    with pytest.raises(HetschedError, match="option bucket"):
        find_formulation("hare-sched-buckets", "colgen").build(ladder(8, 2), bucket=bucket)


def _spans_meet(spans: list[tuple[int, int, int]]) -> bool:
    """Whether two of the (GPU, first tick, end tick) spans overlap on a GPU."""
    spans = sorted(spans)
    return any(g1 == g2 and b > a2 for (g1, _, b), (g2, a2, _) in zip(spans, spans[1:]))


def _dead_gaps_and_tasks(th) -> tuple[list, int]:
    """Every task's training span and every job's dead gaps in the schedule of ``th``."""
    v = th.view
    train = np.rint(v.train).astype(np.int64)
    arrival = np.rint(v.arrival).astype(np.int64)
    spans, gaps = [], 0
    for n, (tasks, _) in enumerate(job_tasks(v, th.schedule)):
        spans += [(g, t, t + int(train[n, g])) for _, g, t in tasks]
        mine = dead_gaps(train, arrival, th.completion_hi, n, tasks)
        spans += mine
        gaps += len(mine)
    return spans, gaps


@settings(max_examples=30, deadline=None)
@given(hare_instances(max_jobs=3, max_tasks=9, max_rounds=3, max_tasks_per_round=3))
def test_dead_gaps_of_an_optimal_schedule_meet_no_task_and_no_other_gap(inst):
    """The argument of hetsched.hare.dead_gaps on CP-SAT's optimum: what a column is charged
    for, training and dead gaps, never overlaps on a GPU across all the jobs."""
    opt = solve(inst, "hare-sched", "cpsat", time_limit=60)
    assert opt.status == Status.OPTIMAL
    th = ticked_horizon(inst, opt.solution, "test", 0)
    spans, _ = _dead_gaps_and_tasks(th)
    assert not _spans_meet(spans)


def test_hare_table2_has_dead_gaps_and_they_meet_nothing():
    """On the paper's job mix (6 jobs, 8 GPUs) a list schedule leaves about a thousand dead
    gaps between rounds; none overlaps a task or another gap."""
    th = ticked_horizon(hare_table2(0, n_jobs=6, n_gpus=8), None, "test", 50)
    spans, gaps = _dead_gaps_and_tasks(th)
    assert gaps > 100
    assert not _spans_meet(spans)


@pytest.mark.parametrize("value", [1, "yes", None])
def test_dead_gaps_must_be_true_or_false(value):
    with pytest.raises(HetschedError, match="option dead_gaps"):
        find_formulation("hare-sched-buckets", "colgen").build(ladder(8, 2), dead_gaps=value)
