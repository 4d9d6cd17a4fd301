"""GPU grouping (TCC'24 (4)-(6)): the MILP equals brute force over all set partitions."""

import json

import pytest
from support import instance_path

from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.instance.generators import random_instance
from hetsched.instance.io import load_instance
from hetsched.models.gpu_grouping import spread
from hetsched.solvers import Status


def partitions(items: list[int], k: int):
    """All partitions of ``items`` into exactly k nonempty blocks (each once, blocks unordered)."""
    if k == 0:
        if not items:
            yield []
        return
    if len(items) < k:
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest, k - 1):  # first alone
        yield [[first]] + p
    for p in partitions(rest, k):  # first joins a block
        for i in range(len(p)):
            yield p[:i] + [[first] + p[i]] + p[i + 1 :]


def test_partition_enumerator_counts_stirling_numbers():
    assert [sum(1 for _ in partitions(list(range(5)), k)) for k in range(1, 6)] == [
        1,
        15,
        25,
        10,
        1,
    ]


@pytest.mark.parametrize("seed", range(8))
def test_milp_equals_brute_force(seed):
    inst = random_instance(
        seed, n_gpus=4 + seed % 3, n_types=3, n_jobs=3, rounds=(1, 1), tasks=(1, 1)
    )
    n_gpus = len(inst.gpus)
    for groups in range(1, min(4, n_gpus) + 1):
        r = solve(inst, "gpu-grouping", "highs", options={"groups": groups})
        assert r.status == Status.OPTIMAL and r.validation.valid
        best = min(spread(inst, p) for p in partitions(list(range(n_gpus)), groups))
        assert r.objective == pytest.approx(best, abs=1e-7), groups
        assert len(r.solution.groups) == groups and all(r.solution.groups)


def test_hand_checked_grouping():
    """Two V100s and two K80s: the groups {V100, K80} x 2 give every job spread 0; any other
    2-grouping puts both V100s together and has spread > 0 for every job."""
    from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server

    gpus = (
        Gpu("v0", "v100", "s"),
        Gpu("v1", "v100", "s"),
        Gpu("k0", "k80", "s"),
        Gpu("k1", "k80", "s"),
    )
    jobs = tuple(
        Job(f"J{n}", 0.0, 1.0, 1, 1, {"v100": 1.0 + n, "k80": 4.0 + n}, {"v100": 0.0, "k80": 0.0})
        for n in range(3)
    )
    inst = Instance(
        "grouping",
        Cluster({"v100": GpuType("v100"), "k80": GpuType("k80")}, (Server("s", gpus),)),
        jobs,
    )
    r = solve(inst, "gpu-grouping", "highs", options={"groups": 2})
    assert r.objective == pytest.approx(0.0, abs=1e-9)
    assert all(sorted(g[0] for g in grp) == ["k", "v"] for grp in r.solution.groups)
    # the worst job under {v0, v1} | {k0, k1}: J0 with 2/1 - 2/4 = 1.5
    assert spread(inst, [[0, 1], [2, 3]]) == pytest.approx(1.5)


def test_more_groups_than_gpus_is_an_input_error(capsys):
    inst = load_instance(instance_path("hare_fig9.json"))
    with pytest.raises(InputError, match="every group needs a GPU"):
        solve(inst, "gpu-grouping", "highs", options={"groups": 9})
    assert (
        main(
            [
                "solve",
                str(instance_path("hare_fig9.json")),
                "--model",
                "gpu-grouping",
                "--groups",
                "9",
            ]
        )
        == 2
    )
    assert "--groups" in capsys.readouterr().err


def test_cli_groups_option(capsys):
    path = str(instance_path("hare_fig9.json"))
    assert main(["solve", path, "--model", "gpu-grouping", "--groups", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and len(out["solution"]["groups"]) == 2
    assert (
        main(["solve", path, "--model", "hare-sched", "--groups", "2"]) == 2
    )  # not an option of hare-sched
    assert "takes no option groups" in capsys.readouterr().err
