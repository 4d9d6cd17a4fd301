"""Loaders for Gavel's throughput table and traces (data/gavel, copied from ../shared/data/gavel)."""

import json
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.instance.gavel_table import NEVER, load_throughputs, load_trace, parse_cluster
from hetsched.instance.io import dump_instance, load_instance
from hetsched.solvers import Status

GAVEL = Path(__file__).resolve().parents[2] / "data" / "gavel"


@pytest.fixture(scope="module")
def table():
    return load_throughputs(GAVEL / "simulation_throughputs.json")


def test_throughput_table_as_documented(table):
    assert set(table.isolated) >= {"v100", "p100", "k80"}
    assert len(table.isolated["v100"]) == 83
    assert (
        table.isolated["k80"][("ResNet-50 (batch size 128)", 2)] == 0.0
    )  # README: cannot run there
    a, b = table.pairs["v100"][("ResNet-18 (batch size 16)", 1)][("A3C", 1)]
    assert (b, a) == table.pairs["v100"][("A3C", 1)][("ResNet-18 (batch size 16)", 1)]  # symmetric


@pytest.mark.parametrize(
    "trace,jobs",
    [
        ("physical_cluster_max_min_fairness.trace", 96),
        ("physical_cluster_minimize_makespan.trace", 100),
        ("msr_seed0_ed69ec.trace", None),
    ],
)
def test_traces_load_round_trip_and_allocate(table, trace, jobs, tmp_path):
    inst = load_trace(GAVEL / "traces" / trace, table, {"v100": 4, "p100": 4, "k80": 4})
    if jobs is not None:
        assert len(inst.jobs) == jobs
    dump_instance(inst, tmp_path / "i.json")
    assert load_instance(tmp_path / "i.json") == inst
    r = solve(inst, "gavel-max-min-fairness-perf", "highs")
    assert r.status == Status.OPTIMAL and r.validation.valid


def test_zero_throughput_means_never(table, tmp_path):
    line = "\t".join(
        [
            "ResNet-50 (batch size 128)",
            "cmd",
            "dir",
            "--num_steps",
            "1",
            "1000",
            "2",
            "1",
            "-1",
            "0",
        ]
    )
    (tmp_path / "t.trace").write_text(line + "\n")
    inst = load_trace(tmp_path / "t.trace", table, {"v100": 2, "k80": 2})
    job = inst.jobs[0]
    assert (
        job.throughput["k80"] == 0.0
        and job.train_time["k80"] == NEVER
        and job.requested_workers == 2
    )
    r = solve(inst, "gavel-max-throughput", "highs")
    assert r.solution.x[0, 0] == pytest.approx(0.0)  # column 0 is k80


def test_bad_inputs_name_the_place(table, tmp_path):
    (tmp_path / "bad.trace").write_text("only\tthree\tfields\n")
    with pytest.raises(InputError, match="line 1.*10 or 7"):
        load_trace(tmp_path / "bad.trace", table, {"v100": 1})
    with pytest.raises(InputError, match="TYPE=COUNT"):
        parse_cluster("v100=0")
    (tmp_path / "tp.json").write_text(json.dumps({"v100": {"ResNet": {"null": 1.0}}}))
    with pytest.raises(InputError, match="job type key"):
        load_throughputs(tmp_path / "tp.json")


def test_import_gavel_cli(tmp_path, capsys):
    out = tmp_path / "gavel.json"
    assert (
        main(
            [
                "import-gavel",
                str(GAVEL / "traces" / "physical_cluster_minimize_makespan.trace"),
                "--throughputs",
                str(GAVEL / "simulation_throughputs.json"),
                "--cluster",
                "v100=2,k80=2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert len(load_instance(out).jobs) == 100
    assert main(["allocate", str(out), "--policy", "makespan", "--json"]) == 0
