"""Harmony's placement from the command line: ``solve``/``validate`` of a placement, ``place``,
``place-sim`` (resumed from its stored results, the exact method's time limit as a policy
argument) and the placement audit's report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.core.runstore import RunStore
from hetsched.harmony import data
from hetsched.sim.registry import make_policy

ROOT = Path(__file__).resolve().parents[2]
COUNTEREXAMPLE = ROOT / "instances" / "audit" / "placement_tetris_counterexample.json"


def test_audit_cli_reports_the_shared_keys(tmp_path, capsys):
    assert (
        main(["audit", "placement", "--trials", "6", "--out", str(tmp_path), "--json", "--quiet"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    for key in ("claim", "trials", "worst_ratio", "bound_at_worst", "violations", "worst_instance"):
        assert key in report
    assert report["evaluated"] == 6 and report["worst_ratio"] >= 1.0 - 1e-9
    assert set(report["checks"]) == {
        "load_balancing",
        "bin_packing",
        "standalone",
        "greedy_true",
        "greedy_learned",
    }
    log = RunStore(tmp_path / "placement-ci-s0" / "trials.jsonl", ("trial",)).rows()
    for (
        rec
    ) in log:  # every method's value is at most the optimum, except when it left a job waiting
        d = rec["details"]
        for name, value in d["values"].items():
            if name not in d["waiting"]:
                assert value <= d["optimum"] + 1e-9


def test_solve_and_validate_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "placement.json"
    assert (
        main(
            [
                "solve",
                str(COUNTEREXAMPLE),
                "--model",
                "harmony-placement",
                "--solver",
                "highs",
                "--option",
                "place_all=true",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert res["status"] == "optimal" and res["solution"]["format"] == "hetsched.harmony/1"
    assert main(["validate", str(COUNTEREXAMPLE), str(out)]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"format": "hetsched.harmony/1", "placement": {"J2": {"s1": {"workers": 9}}}})
    )
    assert main(["validate", str(COUNTEREXAMPLE), str(bad)]) == 1
    capsys.readouterr()
    assert (
        main(
            ["solve", str(COUNTEREXAMPLE), "--model", "harmony-placement", "--option", "nonsense=1"]
        )
        == 2
    )
    assert "nonsense" in capsys.readouterr().err


def test_place_commands(tmp_path, capsys):
    assert main(["place", str(COUNTEREXAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    by = {r["method"]: r for r in out["methods"]}
    assert out["exact"]["status"] == "optimal"
    assert by["tetris"]["optimum_over_reward"] == pytest.approx(
        1 / (1 - data.COMMUNICATION["resnext110"])
    )
    args = [
        "place-sim",
        "--jobs",
        "8",
        "--servers",
        "2",
        "--policies",
        "load-balancing,exact",
        "--out",
        str(tmp_path),
        "--json",
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert {r["policy"] for r in first["results"]} == {"harmony:load-balancing", "harmony:exact"}
    assert len(list(tmp_path.glob("*-jobs.csv"))) == 2
    assert all(min(r["ratio_to_bound"].values()) >= 1 - 1e-9 for r in first["results"])
    assert main(args) == 0  # resumed from the stored results
    assert json.loads(capsys.readouterr().out) == first


def test_the_exact_methods_time_limit_is_a_policy_argument(capsys):
    """``place-sim --time-limit`` reaches the exact method as ``harmony:exact:ORDER:SECONDS``;
    only the exact method takes one."""
    from hetsched.core.errors import InputError

    assert make_policy("harmony:exact:reward:2.5").time_limit == 2.5
    assert make_policy("harmony:exact").time_limit == 10.0
    for bad in ("harmony:tetris:arrival:5", "harmony:exact:arrival:0", "harmony:exact:arrival:x"):
        with pytest.raises(InputError, match="SECONDS"):
            make_policy(bad)
    argv = ["place-sim", "--jobs", "4", "--servers", "3", "--policies", "exact,standalone"]
    assert main([*argv, "--time-limit", "3", "--json"]) == 0
    names = [r["policy"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert names == ["harmony:exact:arrival:3", "harmony:standalone"]
