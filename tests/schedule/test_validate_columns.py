"""The columnar validator against the loop-by-loop oracle (``reference_validate``): random
instances, random schedules broken in every way the validator names (unknown jobs, rounds, tasks
and GPUs, non-finite and early starts, duplicates, missing tasks, overlaps, barriers, per-GPU
times), and the same verdict, violations, completions and objective from both."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given, settings
from hypothesis import strategies as st
from reference_validate import reference_validate

from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskAssignment, TaskSchedule
from hetsched.schedule.validate import validate
from hetsched.sim.engine import simulate
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import gavel_poisson
from hetsched.testing.strategies import hare_instances


def _same(instance: Instance, schedule: TaskSchedule, tol: float | None = None) -> None:
    new, old = validate(instance, schedule, tol), reference_validate(instance, schedule, tol)
    assert new.valid == old.valid
    assert new.completion == old.completion
    assert new.objective == old.objective
    assert sorted((v.kind, v.message) for v in new.violations) == sorted(
        (v.kind, v.message) for v in old.violations
    )
    # the same order, but for overlaps (by GPU index here, by first appearance there)
    firsts = [(v.kind, v.message) for v in new.violations if v.kind != "overlap"]
    assert firsts == [(v.kind, v.message) for v in old.violations if v.kind != "overlap"]


@st.composite
def per_gpu_times(draw, instance: Instance) -> Instance:
    """Some jobs given per-GPU train and sync times (the override the instance's rule reads)."""
    jobs = []
    for j in instance.jobs:
        if draw(st.booleans()):
            gpus = draw(st.lists(st.sampled_from([g.id for g in instance.gpus]), unique=True))
            train = {g: float(draw(st.integers(1, 6))) for g in gpus}
            sync = {g: float(draw(st.integers(0, 2))) for g in gpus}
            j = dataclasses.replace(j, train_time_per_gpu=train, sync_time_per_gpu=sync)
        jobs.append(j)
    return dataclasses.replace(instance, jobs=tuple(jobs))


@st.composite
def broken_schedules(draw) -> tuple[Instance, TaskSchedule]:
    inst = draw(per_gpu_times(draw(hare_instances(max_tasks=10, max_gpus=3))))
    _, base = quick_upper_bound(inst)
    rows = list(base.assignments) if draw(st.integers(0, 4)) else []
    gpus = [g.id for g in inst.gpus] + ["nowhere"]
    jobs = [j.id for j in inst.jobs] + ["ghost"]
    starts = st.one_of(
        st.integers(-8, 120).map(lambda q: q / 4), st.sampled_from([math.nan, math.inf, -math.inf])
    )
    for _ in range(draw(st.integers(0, 6))):
        action = draw(st.sampled_from(["move", "drop", "copy", "add", "shift", *["nudge"] * 4]))
        if action == "add" or not rows:
            rows.append(
                TaskAssignment(
                    draw(st.sampled_from(jobs)),
                    draw(st.integers(-1, 3)),
                    draw(st.integers(-1, 3)),
                    draw(st.sampled_from(gpus)),
                    draw(starts),
                )
            )
            continue
        i = draw(st.integers(0, len(rows) - 1))
        if action == "move":
            rows[i] = dataclasses.replace(rows[i], gpu=draw(st.sampled_from(gpus)))
        elif action == "drop":
            del rows[i]
        elif action == "copy":
            rows.insert(draw(st.integers(0, len(rows))), rows[i])
        elif action == "shift":
            rows[i] = dataclasses.replace(rows[i], start=draw(starts))
        else:  # a little early, as a solver's tolerance leaves it
            early = draw(st.sampled_from([1e-7, 1e-3, 0.03, 0.25, 1.0]))
            rows[i] = dataclasses.replace(rows[i], start=rows[i].start - early)
    return inst, TaskSchedule.of(rows, base.instance, base.instance_hash)


@settings(max_examples=300)  # cheap: a few ms each
@given(broken_schedules(), st.sampled_from([None, 0.0, 0.5]))
def test_columns_and_the_loop_oracle_agree(case, tol):
    _same(*case, tol)


def test_they_agree_on_a_simulated_run():
    """A valid run of thousands of tasks, and the same run with every 97th task moved early."""
    inst = gavel_poisson(0, n_jobs=60)
    run = simulate(inst, make_policy("fifo"), record_events=False)
    _same(inst, run.schedule)
    rows = [
        dataclasses.replace(a, start=a.start - 50.0) if i % 97 == 0 else a
        for i, a in enumerate(run.schedule.assignments)
    ]
    broken = TaskSchedule.of(rows, run.schedule.instance, run.schedule.instance_hash)
    report = validate(inst, broken)
    assert not report.valid and {v.kind for v in report.violations} >= {"overlap"}
    _same(inst, broken)


def test_a_schedule_far_smaller_than_its_instance_is_reported_once():
    """Missing tasks one by one up to 10,000 more than placed; past that, one line."""
    inst = gavel_poisson(0, n_jobs=5)
    one = TaskSchedule.of([TaskAssignment(inst.jobs[0].id, 0, 0, inst.gpus[0].id, 1e9)])
    each = [v for v in validate(inst, one).violations if v.kind == "missing_task"]
    assert len(each) == inst.n_tasks - 1
    _same(inst, one)
    long = dataclasses.replace(inst.jobs[0], rounds=20_000)
    huge = dataclasses.replace(inst, jobs=(long, *inst.jobs[1:]))
    once = [v.message for v in validate(huge, one).violations]
    assert once == [f"the schedule places 1 of the instance's {huge.n_tasks} tasks"]
    _same(huge, one)
