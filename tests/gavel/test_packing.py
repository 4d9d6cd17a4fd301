"""Space-sharing variants: pair throughputs from Gavel's table, checked against a hand-sized LP."""

from pathlib import Path

import pytest
from scipy.optimize import linprog

from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.solvers import Status

TABLE = Path(__file__).resolve().parents[2] / "data" / "gavel" / "simulation_throughputs.json"
A, B = "ResNet-18 (batch size 16)", "A3C"


def one_gpu(models=(A, B)) -> Instance:
    from hetsched.instance.gavel_table import load_throughputs

    table = load_throughputs(TABLE)
    cluster = Cluster({"v100": GpuType("v100")}, (Server("s", (Gpu("g", "v100", "s"),)),))
    jobs = tuple(
        Job(
            f"J{i}",
            0.0,
            1.0,
            1,
            1,
            {"v100": 1.0},
            {"v100": 0.0},
            throughput={"v100": table.isolated["v100"][(m, 1)]},
            model=ModelInfo(name=m),
        )
        for i, m in enumerate(models)
    )
    return Instance("one-gpu", cluster, jobs)


def test_packed_max_min_matches_a_three_variable_lp():
    """One V100, jobs A and B. Shares: pair p, A alone qa, B alone qb; p + qa + qb <= 1.
    X^equal gives each job half the GPU, so thr_eq = T/2; maximize min(norm_A, norm_B)."""
    from hetsched.instance.gavel_table import load_throughputs

    table = load_throughputs(TABLE)
    ta, tb = table.isolated["v100"][(A, 1)], table.isolated["v100"][(B, 1)]
    pa, pb = table.pairs["v100"][(A, 1)][(B, 1)]
    # variables p, qa, qb, z: max z; z <= (pa p + ta qa) / (ta/2); z <= (pb p + tb qb) / (tb/2)
    res = linprog(
        [0, 0, 0, -1],
        A_ub=[[-pa / (ta / 2), -2, 0, 1], [-pb / (tb / 2), 0, -2, 1], [1, 1, 1, 0]],
        b_ub=[0, 0, 1],
        bounds=[(0, None)] * 3 + [(None, None)],
    )
    inst = one_gpu()
    packed = solve(
        inst, "gavel-max-min-fairness-perf-packed", "highs", options={"throughputs": str(TABLE)}
    )
    plain = solve(inst, "gavel-max-min-fairness-perf", "highs")
    assert packed.status == Status.OPTIMAL and packed.validation.valid
    assert packed.objective == pytest.approx(-res.fun, rel=1e-7)
    assert plain.objective == pytest.approx(1.0)  # half the GPU each: exactly the equal share
    assert packed.objective >= plain.objective - 1e-9
    assert packed.objective > 1.0  # this pair shares a V100 profitably


def test_packed_max_min_under_gavels_convention_matches_its_lp():
    """Gavel's packed normalizers on one V100: flatten divides by sum_r T = T, then by the
    proportional throughput T again: z <= (pa p + ta qa) / ta^2, z <= (pb p + tb qb) / tb^2;
    the throughput sum divides by T once."""
    from hetsched.instance.gavel_table import load_throughputs

    table = load_throughputs(TABLE)
    ta, tb = table.isolated["v100"][(A, 1)], table.isolated["v100"][(B, 1)]
    pa, pb = table.pairs["v100"][(A, 1)][(B, 1)]
    res = linprog(
        [0, 0, 0, -1],
        A_ub=[[-pa / ta**2, -1 / ta, 0, 1], [-pb / tb**2, 0, -1 / tb, 1], [1, 1, 1, 0]],
        b_ub=[0, 0, 1],
        bounds=[(0, None)] * 3 + [(None, None)],
    )
    options = {"throughputs": str(TABLE), "convention": "gavel"}
    packed = solve(one_gpu(), "gavel-max-min-fairness-perf-packed", "highs", options=options)
    assert packed.status == Status.OPTIMAL and packed.validation.valid
    assert packed.objective == pytest.approx(-res.fun, rel=1e-7)
    total = solve(one_gpu(), "gavel-max-throughput-packed", "highs", options=options)
    best = max(pa / ta + pb / tb, 1.0)  # the pair all the time, or one job alone (1 = T / T)
    assert total.objective == pytest.approx(best, rel=1e-7)


def test_packed_total_throughput_at_least_unpacked():
    inst = one_gpu((A, B, "CycleGAN"))
    packed = solve(
        inst, "gavel-max-throughput-packed", "highs", options={"throughputs": str(TABLE)}
    )
    plain = solve(inst, "gavel-max-throughput", "highs")
    assert packed.status == Status.OPTIMAL and packed.objective >= plain.objective - 1e-9


def test_packing_needs_the_job_type():
    inst = one_gpu()
    import dataclasses

    bare = dataclasses.replace(
        inst, jobs=(dataclasses.replace(inst.jobs[0], model=None), inst.jobs[1])
    )
    with pytest.raises(InputError, match=r"\$.jobs\[0\].model.name"):
        solve(
            bare, "gavel-max-min-fairness-perf-packed", "highs", options={"throughputs": str(TABLE)}
        )


def test_allocate_packed_cli(tmp_path, capsys):
    from hetsched.instance.io import dump_instance

    path = tmp_path / "i.json"
    dump_instance(one_gpu(), path)
    assert (
        main(
            [
                "allocate",
                str(path),
                "--policy",
                "max-min-fairness-perf",
                "--packed",
                "--throughputs",
                str(TABLE),
                "--json",
            ]
        )
        == 0
    )
    assert (
        main(
            ["allocate", str(path), "--policy", "makespan", "--packed", "--throughputs", str(TABLE)]
        )
        == 2
    )
    assert "--packed exists for" in capsys.readouterr().err
