import json
import subprocess
import sys

import pytest
from support import INSTANCES

from hetsched.cli import main
from hetsched.schedule.io import load_schedule

FIG5 = str(INSTANCES / "paper" / "hare_fig5.json")


def test_solve_json_has_the_documented_keys(capsys, tmp_path):
    out = tmp_path / "sol.json"
    assert main(["solve", FIG5, "--solver", "cpsat", "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {
        "instance",
        "model",
        "solver",
        "status",
        "objective",
        "bound",
        "gap",
        "seconds",
        "solution",
    } <= set(d)
    assert d["status"] == "optimal" and d["objective"] == 17.0 and d["gap"] == 0
    assert len(load_schedule(out).assignments) == 6
    assert d["log"].startswith("cpsat: OPTIMAL")  # the method's own summary


def test_solve_colgen_shows_its_log(capsys):
    assert main(["solve", FIG5, "--solver", "colgen"]) == 0
    text = capsys.readouterr().out
    assert "status     optimal" in text and "objective  17" in text
    assert "log        colgen:" in text and "iterations" in text


def test_solution_written_by_solve_validates(capsys, tmp_path):
    out = tmp_path / "sol.json"
    assert main(["solve", FIG5, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "status     optimal" in text and "objective  17" in text
    assert main(["validate", FIG5, str(out)]) == 0
    assert "valid: objective 17" in capsys.readouterr().out


def test_validate_exits_1_and_lists_violations(capsys, tmp_path):
    out = tmp_path / "sol.json"
    main(["solve", FIG5, "--solver", "cpsat", "--out", str(out)])
    d = json.loads(out.read_text())
    for a in d["assignments"]:
        a["start"] = 0.0
    out.write_text(json.dumps(d))
    capsys.readouterr()
    assert main(["validate", FIG5, str(out)]) == 1
    text = capsys.readouterr().out
    assert text.startswith("invalid:") and "[overlap]" in text and "[arrival]" in text


def test_validate_accepts_the_json_output_of_solve(capsys, tmp_path):
    main(["solve", FIG5, "--solver", "cpsat", "--json"])
    f = tmp_path / "res.json"
    f.write_text(capsys.readouterr().out)
    assert main(["validate", FIG5, str(f)]) == 0


def test_bad_solution_file_exits_2(capsys, tmp_path):
    f = tmp_path / "sol.json"
    f.write_text('{"assignments": [{"job": "J1", "round": 0, "task": 0, "gpu": "GPU1"}]}')
    assert main(["validate", FIG5, str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"hetsched: error: {f}: $.assignments[0]: missing required field 'start'"


@pytest.mark.parametrize(
    "field, value, reason",
    [
        ("start", "9" * 400, "out of range (not a finite float)"),
        ("round", str(2**70), f"out of range (got {2**70})"),
    ],
)
def test_numbers_a_schedule_cannot_hold_exit_2(capsys, tmp_path, field, value, reason):
    """A start no float holds, or a round past 64 bits, is one line naming the field (the
    columns hold float64 and int64); it was an internal error."""
    row = {"job": '"J1"', "round": "0", "task": "0", "gpu": '"GPU1"', "start": "0", field: value}
    f = tmp_path / "sol.json"
    f.write_text('{"assignments": [{' + ", ".join(f'"{k}": {v}' for k, v in row.items()) + "}]}")
    assert main(["validate", FIG5, str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"hetsched: error: {f}: $.assignments[0].{field}: {reason}"


def test_unknown_model_exits_2_with_one_line(capsys):
    assert main(["solve", FIG5, "--model", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown model 'nope'" in err[0] and "hare-sched" in err[0]


def test_models_lists_every_formulation(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "hare-sched " in out and "hare-sched-ti" in out and "cpsat" in out


def test_console_script_runs_in_a_fresh_process():
    p = subprocess.run(
        [sys.executable, "-m", "hetsched.cli", "solve", FIG5, "--solver", "cpsat", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["objective"] == 17.0


def test_heuristic_json_has_the_solve_keys_and_a_bound(capsys, tmp_path):
    out = tmp_path / "alg1.json"
    assert (
        main(["heuristic", str(FIG5), "--order", "hare-sched-rl", "--json", "--out", str(out)]) == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert main(["solve", str(FIG5), "--json"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert set(res) == set(solved)
    assert res["model"] == "hare-alg1" and res["solver"] == "order:hare-sched-rl"
    assert res["status"] == "feasible" and res["validation"]["valid"]
    assert res["bound"] <= solved["objective"] <= res["objective"]
    assert main(["validate", str(FIG5), str(out)]) == 0


def test_heuristic_rejects_an_unknown_order_in_one_line(capsys):
    try:
        main(["heuristic", str(FIG5), "--order", "nonsense"])
    except SystemExit as exc:  # argparse: exit 2 with the valid choices
        assert exc.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and "hare-sched-rl" in err


def test_solve_relaxation_says_its_objective_is_a_lower_bound(capsys):
    assert main(["solve", str(FIG5), "--model", "hare-sched-rl"]) == 0
    out = capsys.readouterr().out
    assert "optimal (relaxation)" in out and "lower bound" in out


def test_bench_hare_quick_writes_json(capsys, tmp_path):
    out = tmp_path / "hare.json"
    assert main(["bench", "hare", "--quick", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    sizes = [row["tasks"] for row in data["throughput"] if "tasks" in row]
    assert sizes == [1000, 10000] and all(
        row["tasks_per_second"] > 0 for row in data["throughput"] if "tasks" in row
    )
    assert data["throughput"][-1]["speedup"] > 1  # compiled vs interpreted loop, same process


def test_heuristic_default_order_is_the_interval_lp(capsys):
    """The default ordering is the interval LP's (Hare_Sched_RL took minutes at 200 tasks; its
    speed is measured by ``bench hare``, not here)."""
    assert main(["heuristic", str(INSTANCES / "allocation" / "gavel_two_jobs.json"), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["solver"] == "order:hare-interval-lp" and res["validation"]["valid"]
