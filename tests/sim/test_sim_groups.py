"""HLAS's GPU groups (TCC'24 (4)-(6)) as the machine a policy runs on, and HLAS-P's history
predictor (Sec. V.A)."""

import pytest

from hetsched.core.errors import HetschedError, InputError
from hetsched.hare.view import hare_view
from hetsched.instance.generators import random_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.models.gpu_grouping import spread
from hetsched.sim.engine import simulate
from hetsched.sim.gpu_groups import group_machine, grouped_cluster, serpentine_groups
from hetsched.sim.registry import make_policy
from hetsched.sim.run import run_policy
from hetsched.sim.workloads import philly_window


@pytest.mark.parametrize("seed", range(4))
def test_a_group_runs_a_task_at_the_sum_of_its_gpus_speeds(seed):
    inst = random_instance(seed, n_gpus=5, n_types=3, n_jobs=3, rounds=(1, 2), tasks=(1, 3))
    members = [[0, 3], [1], [2, 4]]
    machine = hare_view(group_machine(inst, members))
    speed = 1.0 / hare_view(inst).cycle
    for u, grp in enumerate(members):
        assert machine.cycle[:, u] == pytest.approx(
            1.0 / speed[:, grp].sum(axis=1)
        )  # eq. (5)'s group speed
        assert (machine.train[:, u] > 0).all() and (machine.sync[:, u] >= 0).all()
    view = hare_view(inst)  # a group of one GPU keeps that GPU's own times
    assert machine.train[:, 1] == pytest.approx(view.train[:, 1]) and machine.sync[
        :, 1
    ] == pytest.approx(view.sync[:, 1])


def test_singleton_groups_give_the_ungrouped_run():
    inst = random_instance(3, n_gpus=4, n_types=2, n_jobs=5, rounds=(1, 3), tasks=(1, 3))
    grouped = run_policy(inst, "hlas:4")
    assert grouped["gpu_groups"]["members"] == [[g.id] for g in inst.gpus]
    assert grouped["valid"] and grouped["_jct"] == pytest.approx(run_policy(inst, "hlas")["_jct"])


@pytest.mark.parametrize("seed", range(3))
def test_small_clusters_get_the_optimal_grouping_and_it_beats_serpentine(seed):
    inst = random_instance(seed, n_gpus=6, n_types=3, n_jobs=3, rounds=(1, 1), tasks=(1, 1))
    g = grouped_cluster(inst, 2)
    assert g.method == "milp-optimal" and sorted(m for grp in g.groups for m in grp) == list(
        range(6)
    )
    assert g.spread == pytest.approx(spread(inst, [list(x) for x in g.groups]))
    assert g.spread <= spread(inst, serpentine_groups(inst, 2)) + 1e-9


def test_philly_groups_of_one_gpu_per_type_have_no_spread():
    inst = philly_window(
        0, n_jobs=40
    )  # 3 types x 20 GPUs: serpentine puts one GPU of each type in each of 20 groups
    g = grouped_cluster(inst, 20)
    assert g.method == "serpentine" and g.spread == pytest.approx(0, abs=1e-12)
    types = [sorted(inst.gpus[m].type for m in grp) for grp in g.groups]
    assert all(t == types[0] and len(set(t)) == 3 for t in types)
    summary = run_policy(inst, "hlas:20")
    assert summary["valid"] and summary["gpu_groups"]["groups"] == 20 and len(summary["_jct"]) == 40


@pytest.mark.parametrize("bad", ["hlas:0", "hlas:x", "hlas-p:-1"])
def test_bad_group_counts_are_named(bad):
    with pytest.raises(HetschedError, match="GPU groups"):
        make_policy(bad)


def test_more_groups_than_gpus_is_an_input_error():
    inst = random_instance(0, n_gpus=3, n_types=2, n_jobs=2, rounds=(1, 1), tasks=(1, 1))
    with pytest.raises(InputError, match="groups"):
        grouped_cluster(inst, 4)


def _history_instance() -> Instance:
    """One GPU; A1 (model a, 4 rounds) first; then A2 (a, 4 rounds) and B (b, 4 rounds) arrive
    together at t=0.5 with B first in FIFO order."""
    cluster = Cluster({"v": GpuType("v")}, (Server("s", (Gpu("g", "v", "s"),)),))

    def job(i, name, arrival):
        return Job(
            id=i,
            arrival=arrival,
            weight=1.0,
            rounds=4,
            tasks_per_round=1,
            train_time={"v": 1.0},
            sync_time={"v": 0.0},
            model=ModelInfo(name=name),
        )

    return Instance(
        "history",
        cluster,
        (job("A1", "a", 0.0), job("B", "b", 0.5), job("A2", "a", 0.5)),
        metadata={"hlas": {"thresholds": [100.0]}},
    )  # one queue: the sub-queues decide


def test_hlas_p_learns_from_completed_jobs_of_the_same_model():
    inst = _history_instance()
    plain = simulate(inst, make_policy("hlas"))  # one queue, FIFO: A1, B, A2
    assert plain.completion == {"A1": 4.0, "B": 8.0, "A2": 12.0}
    policy = make_policy("hlas-p")
    learned = simulate(inst, policy)
    assert learned.validation.valid
    # after A1 (4 rounds) completes, A2 is predicted (0 + 4 - 0) / 2 = 2 more rounds: sub-queue q^1, before B
    assert policy.learned() == {"a": (2, 4.0)}  # A1, then A2; B ends last and no decision follows
    assert learned.completion == {"A1": 4.0, "A2": 8.0, "B": 12.0}
    off = simulate(inst, type(policy)(history=False))
    assert off.completion == plain.completion  # no hints, no history: HLAS-P is HLAS
