"""The validator recomputes the objective and rejects each kind of violation of (4)-(8)."""

import dataclasses
import math

import pytest
from support import INSTANCES

from hetsched.hare.list_scheduling import arrival_order, list_schedule
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.hare.view import hare_view
from hetsched.instance.io import instance_hash, load_instance
from hetsched.schedule.model import TaskAssignment, TaskSchedule
from hetsched.schedule.validate import KINDS, validate

FIG5 = load_instance(INSTANCES / "paper" / "hare_fig5.json")


def hand_schedule() -> TaskSchedule:
    """Fig. 5(b) with our numbers: n's tasks follow i_1 twice on GPU1 and i_2 on GPU2."""
    a = [
        TaskAssignment("J1", 0, 0, "GPU1", 0),
        TaskAssignment("J2", 0, 0, "GPU2", 0),
        TaskAssignment("J3", 0, 0, "GPU3", 0),
        TaskAssignment("n", 0, 0, "GPU1", 2),
        TaskAssignment("n", 0, 1, "GPU2", 3),
        TaskAssignment("n", 0, 2, "GPU1", 4),
    ]
    return TaskSchedule.of(a, FIG5.name, instance_hash(FIG5))


def test_objective_recomputed_by_hand():
    r = validate(FIG5, hand_schedule())
    assert r.valid, r.violations
    assert r.completion == {"J1": 2, "J2": 3, "J3": 6, "n": 6}
    assert r.objective == 2 + 3 + 6 + 6


def test_scale_fixed_schedule_of_fig5a_costs_more():
    """Fig. 5(a): n waits until all 3 GPUs are free (after i_3): C_n = 8."""
    a = list(hand_schedule().assignments[:3]) + [
        TaskAssignment("n", 0, k, f"GPU{k + 1}", 6) for k in range(3)
    ]
    r = validate(FIG5, TaskSchedule.of(a))
    assert r.valid and r.objective == 2 + 3 + 6 + 8


def test_sync_may_overlap_the_next_task_on_a_gpu():
    inst = load_instance(INSTANCES / "paper" / "hare_fig9.json")
    d = dataclasses.replace(
        inst.jobs[0],
        sync_time={k: 1.0 for k in inst.jobs[0].sync_time},
        rounds=1,
        tasks_per_round=2,
    )
    inst2 = dataclasses.replace(inst, jobs=(d,))
    # two tasks back to back on GPU1: the first syncs during [3, 4) while the second trains
    s = TaskSchedule.of(
        (TaskAssignment("J_A", 0, 0, "GPU1", 0), TaskAssignment("J_A", 0, 1, "GPU1", 3))
    )
    r = validate(inst2, s)
    assert r.valid and r.objective == 7


def test_a_short_overlap_is_caught_however_late_the_instance_runs():
    """A job arriving at 2e7 s stretches the time scale; the slack was 1e-6 of it (20 s here),
    which let n's task train on GPU3 0.5 s before J3's task left it."""
    late = dataclasses.replace(FIG5.jobs[0], id="late", arrival=2e7)
    inst = dataclasses.replace(FIG5, jobs=FIG5.jobs + (late,))
    ok = list(hand_schedule().assignments) + [TaskAssignment("late", 0, 0, "GPU1", 2e7)]
    assert validate(inst, TaskSchedule.of(ok)).valid
    moved = [x for x in ok if (x.job, x.task) != ("n", 1)]
    moved.append(TaskAssignment("n", 0, 1, "GPU3", 5.5))  # J3 trains there until 6
    kinds = [v.kind for v in validate(inst, TaskSchedule.of(moved)).violations]
    assert kinds == ["overlap"]


def _mutations(base: TaskSchedule):
    a = sorted(base.assignments)
    by = {(x.job, x.round, x.task): x for x in a}
    rest = lambda *keys: [x for x in a if (x.job, x.round, x.task) not in keys]  # noqa: E731
    n0 = by[("n", 0, 0)]
    yield "arrival", rest(("n", 0, 0)) + [dataclasses.replace(n0, start=0.5, gpu="GPU3")]
    yield "missing_task", rest(("J2", 0, 0))
    yield "duplicate_task", a + [dataclasses.replace(by[("J2", 0, 0)], gpu="GPU3", start=20)]
    yield "unknown_gpu", rest(("J1", 0, 0)) + [dataclasses.replace(by[("J1", 0, 0)], gpu="GPU9")]
    yield "unknown_task", a + [TaskAssignment("J1", 1, 0, "GPU1", 30)]
    yield "unknown_task", a + [TaskAssignment("nobody", 0, 0, "GPU1", 30)]
    yield "overlap", rest(("n", 0, 1)) + [dataclasses.replace(by[("n", 0, 1)], gpu="GPU3", start=3)]
    yield "bad_start", rest(("n", 0, 2)) + [dataclasses.replace(by[("n", 0, 2)], start=math.nan)]


@pytest.mark.parametrize(
    "kind,assignments",
    list(_mutations(hand_schedule())),
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_each_violation_kind_is_caught(kind, assignments):
    r = validate(FIG5, TaskSchedule.of(assignments, FIG5.name, instance_hash(FIG5)))
    assert not r.valid
    assert kind in {v.kind for v in r.violations}, r.violations


def test_barrier_violation_is_caught():
    inst = load_instance(INSTANCES / "paper" / "hare_fig9.json")
    _, sched = quick_upper_bound(inst)
    a = sorted(sched.assignments)
    late = next(x for x in a if x.round == 1)
    moved = [x for x in a if x != late] + [dataclasses.replace(late, start=0.0, gpu="GPU4")]
    r = validate(inst, TaskSchedule.of(moved))
    assert "barrier" in {v.kind for v in r.violations}


def test_instance_mismatch_is_caught():
    s = dataclasses.replace(hand_schedule(), instance_hash="0" * 16)
    assert [v.kind for v in validate(FIG5, s).violations] == ["instance_mismatch"]


def test_every_violation_is_reported_not_only_the_first():
    a = [dataclasses.replace(x, gpu="GPU1", start=0.0) for x in hand_schedule().assignments]
    r = validate(FIG5, TaskSchedule.of(a))
    assert sum(v.kind == "overlap" for v in r.violations) == 5
    assert sum(v.kind == "arrival" for v in r.violations) == 3


def test_every_kind_has_a_test():
    tested = {k for k, _ in _mutations(hand_schedule())} | {"barrier", "instance_mismatch"}
    assert tested == set(KINDS)


def test_list_schedule_rejects_an_order_that_breaks_rounds():
    v = hare_view(load_instance(INSTANCES / "paper" / "hare_fig9.json"))
    order = arrival_order(v)[::-1]
    with pytest.raises(ValueError, match="before all tasks of round"):
        list_schedule(v, order)
