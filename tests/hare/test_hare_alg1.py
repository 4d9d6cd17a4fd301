"""Algorithm 1 as printed, its variants and orderings; alpha; the relaxations' bounds."""

import numpy as np
import pytest

from hetsched.hare.algorithm1 import alpha, hare_alg1, precedence_order, task_priorities
from hetsched.hare.heuristic import run_heuristic
from hetsched.hare.list_scheduling import check_precedence, schedule_in_order
from hetsched.hare.view import hare_view
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.schedule.validate import validate
from hetsched.solvers import Status


def two_gpu_instance(sync=1.0) -> Instance:
    """g0 slow (T^c 3), g1 fast (T^c 1), sync ``sync`` on both; one job, 2 rounds x 2 tasks."""
    cluster = Cluster(
        {"k80": GpuType("k80"), "v100": GpuType("v100")},
        (Server("s", (Gpu("g0", "k80", "s"), Gpu("g1", "v100", "s"))),),
    )
    job = Job(
        id="A",
        arrival=0.0,
        weight=1.0,
        rounds=2,
        tasks_per_round=2,
        train_time={"k80": 3.0, "v100": 1.0},
        sync_time={"k80": sync, "v100": sync},
    )
    return Instance(name="two-gpu", cluster=cluster, jobs=(job,))


def starts(run):
    """(round, task) -> (start, GPU) of a one-job run."""
    v = run.view
    _, r, k = v.task_arrays
    return {
        (int(b), int(c)): (float(s), v.gpu_ids[g]) for b, c, g, s in zip(r, k, run.gpu, run.start)
    }


def test_algorithm1_lines_5_to_17_by_hand():
    """Hand trace: round 0 takes g0 (tie, lowest index) then g1; round 1 waits for the barrier at
    t = 0 + 3 + 1 = 4; line 12 picks the GPU with the least phi (g1: 1, then g0: 3); C = 4 + 3 + 1."""
    inst = two_gpu_instance()
    v = hare_view(inst)
    run = hare_alg1(v, np.array([0.0, 0.1, 5.0, 5.1]))
    assert starts(run) == {
        (0, 0): (0.0, "g0"),
        (0, 1): (0.0, "g1"),
        (1, 0): (4.0, "g1"),
        (1, 1): (4.0, "g0"),
    }
    assert run.objective() == 8.0
    report = validate(inst, run.to_schedule())
    assert report.valid and report.objective == 8.0


def test_earliest_finish_variant_by_hand():
    """The named variant puts every task on the GPU where it ends first: all on g1, C = 6."""
    inst = two_gpu_instance()
    run = hare_alg1(hare_view(inst), np.array([0.0, 0.1, 5.0, 5.1]), rule="earliest_finish")
    assert starts(run) == {
        (0, 0): (0.0, "g1"),
        (0, 1): (1.0, "g1"),
        (1, 0): (3.0, "g1"),
        (1, 1): (4.0, "g1"),
    }
    assert run.objective() == 6.0


def test_sync_overlaps_the_next_task_on_the_gpu():
    """Line 16 advances phi by training only: the next task may start while the sync runs."""
    inst = two_gpu_instance(sync=2.0)
    run = hare_alg1(hare_view(inst), np.array([0.0, 0.1, 5.0, 5.1]), rule="earliest_finish")
    # round 0 on g1 at 0 and 1 (the first task's sync 1..3 overlaps the second task's training)
    assert starts(run)[0, 1] == (1.0, "g1")
    assert validate(inst, run.to_schedule()).valid


def test_priority_order_is_kept_when_it_respects_rounds_and_repaired_otherwise():
    v = hare_view(two_gpu_instance())
    assert precedence_order(v, np.array([1.0, 0.0, 3.0, 2.0])).tolist() == [1, 0, 3, 2]
    # a round-1 task with the smallest H is moved after round 0, not before it
    order = precedence_order(v, np.array([1.0, 2.0, 0.0, 3.0])).tolist()
    assert order == [0, 1, 2, 3]
    check_precedence(v, np.array(order))
    with pytest.raises(ValueError, match="before all tasks of round 0"):
        schedule_in_order(v, np.array([0, 2, 1, 3]), "earliest_available")
    with pytest.raises(ValueError, match="permutation"):
        schedule_in_order(v, np.array([0, 0, 1, 2]), "earliest_available")
    with pytest.raises(ValueError, match="finite"):
        precedence_order(v, np.array([0.0, np.nan, 1.0, 2.0]))


def test_h_from_a_relaxation_is_x_hat_plus_half_the_largest_training_time():
    v = hare_view(two_gpu_instance())
    assert task_priorities(v, np.array([0.0, 0.0, 4.0, 4.0])).tolist() == [1.5, 1.5, 5.5, 5.5]


def test_alpha_and_its_sync_conventions():
    v = hare_view(two_gpu_instance(sync=1.0))
    assert alpha(v) == 3.0  # T^c 3/1; T^s 1/1
    v0 = hare_view(two_gpu_instance(sync=0.0))
    assert alpha(v0) == 3.0  # 0/0 counts as 1
    inst = two_gpu_instance()
    job = inst.jobs[0]
    mixed = Instance(
        name="m",
        cluster=inst.cluster,
        jobs=(Job(**{**job.__dict__, "sync_time": {"k80": 1.0, "v100": 0.0}}),),
    )
    assert alpha(hare_view(mixed)) == float("inf")


@pytest.mark.parametrize(
    "order", ["hare-sched-rl", "hare-sched-rl-subsets", "hare-interval-lp", "arrival", "wspt"]
)
@pytest.mark.parametrize("rule", ["earliest_available", "earliest_finish"])
def test_every_ordering_and_rule_gives_a_valid_schedule_above_its_bound(order, rule):
    from support import instance_path

    from hetsched.instance.io import load_instance

    inst = load_instance(instance_path("hare_fig5.json"))
    res = run_heuristic(inst, order=order, rule=rule, time_limit=30)
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.validation.valid and res.objective == res.validation.objective
    assert res.objective >= 17.0 - 1e-9  # the certified optimum
    if res.bound is not None:
        assert res.bound <= 17.0 + 1e-9
        assert res.gap == pytest.approx((res.objective - res.bound) / res.objective)


def test_same_seed_same_result():
    from hetsched.instance.generators import hare_table2

    a, b = hare_table2(3, n_jobs=30, n_gpus=16), hare_table2(3, n_jobs=30, n_gpus=16)
    assert a == b
    ra = run_heuristic(a, order="hare-interval-lp")
    rb = run_heuristic(b, order="hare-interval-lp")
    assert ra.objective == rb.objective and ra.solution == rb.solution
