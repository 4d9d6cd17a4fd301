"""`hetsched export` (LP/MPS that another solver reads back to the same optimum), optional
solvers (used where found, a clear error where not), `hetsched show` (validated listing, Gantt
chart, audit histograms)."""

import json

import highspy
import pytest
from support import INSTANCES, MANIFEST

from hetsched.cli import main
from hetsched.exact.solve import solve
from hetsched.instance.io import load_instance
from hetsched.solvers import OPTIONAL, Status, available_solvers
from hetsched.solvers.optional import is_available

FIG5 = INSTANCES / "paper" / "hare_fig5.json"


def highs_optimum(path) -> float:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


@pytest.mark.parametrize("fmt", ["lp", "mps"])
@pytest.mark.parametrize("name", ["small-01.json", "small-02.json"])
def test_exported_model_solved_elsewhere_gives_the_optimum(tmp_path, capsys, fmt, name):
    out = tmp_path / f"m.{fmt}"
    assert (
        main(
            [
                "export",
                str(INSTANCES / "small" / name),
                "--model",
                "hare-sched-ti",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert f"({fmt.upper()}," in capsys.readouterr().out
    assert highs_optimum(out) == pytest.approx(
        MANIFEST[name]["optimum"]
    )  # read back by plain HiGHS, no Pyomo


def test_export_names_constraints_after_the_paper(tmp_path):
    out = tmp_path / "fig5.lp"
    assert main(["export", str(FIG5), "--out", str(out)]) == 0
    text = out.read_text()
    assert "total_weighted_completion" in text and "arrival" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--groups", "2"], "takes no option groups"),
        (["--model", "nope"], "unknown model"),
        (["--format", "xls"], "invalid choice"),
    ],
)
def test_export_bad_requests(tmp_path, capsys, args, message):
    code = None
    try:
        code = main(["export", str(FIG5), "--out", str(tmp_path / "x.lp"), *args])
    except SystemExit as e:  # argparse's own choices check
        code = e.code
    assert code == 2 and message in capsys.readouterr().err


def test_solvers_lists_what_is_here(capsys):
    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    assert "highs" in out and "cpsat" in out
    here = available_solvers()
    for name in OPTIONAL:
        line = next(x for x in out.splitlines() if x.startswith(name))
        assert ("available" in line.split()) == (name in here)


@pytest.mark.parametrize("name", sorted(OPTIONAL))
def test_optional_solver_agrees_or_says_it_is_missing(name, capsys):
    inst = load_instance(FIG5)
    if not is_available(name):
        assert main(["solve", str(FIG5), "--solver", name]) == 2
        err = capsys.readouterr().err
        assert f"solver '{name}' is not available" in err and "needs" in err
        return
    res = solve(inst, "hare-sched", name, time_limit=60)
    assert res.status == Status.OPTIMAL and res.validation.valid
    assert res.objective == pytest.approx(17.0) and res.bound == pytest.approx(17.0, abs=1e-6)


@pytest.mark.parametrize("name", [n for n in ("glpk", "cbc") if is_available(n)])
def test_optional_solver_time_limit_is_never_optimal(name):
    inst = load_instance(
        INSTANCES / "small" / "small-07.json"
    )  # not proven in 1 s by these solvers
    res = solve(inst, "hare-sched", name, time_limit=1)
    assert res.status != Status.OPTIMAL or res.objective == pytest.approx(
        MANIFEST["small-07.json"]["optimum"]
    )


def test_show_validates_lists_and_draws(tmp_path, capsys):
    sol = tmp_path / "sol.json"
    assert (
        main(
            [
                "solve",
                str(INSTANCES / "small" / "small-19.json"),
                "--solver",
                "cpsat",
                "--out",
                str(sol),
            ]
        )
        == 0
    )
    capsys.readouterr()
    png = tmp_path / "g.png"
    assert main(["show", str(sol), "--gantt", str(png)]) == 0  # the instance found by its hash
    out = capsys.readouterr().out
    assert "valid: True" in out and f"{MANIFEST['small-19.json']['optimum']:g}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_show_reports_an_invalid_schedule(tmp_path, capsys):
    sol = tmp_path / "sol.json"
    assert main(["solve", str(FIG5), "--solver", "cpsat", "--out", str(sol)]) == 0
    data = json.loads(sol.read_text())
    data["assignments"][0]["start"] = -5.0  # before the job's arrival
    sol.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["show", str(sol), "--instance", str(FIG5)]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_show_unknown_instance_hash_is_named(tmp_path, capsys):
    sol = tmp_path / "sol.json"
    sol.write_text(json.dumps({"instance": "x", "instance_hash": "0000", "assignments": []}))
    assert main(["show", str(sol)]) == 2
    assert "pass --instance" in capsys.readouterr().err


def test_show_audit_histogram(tmp_path, capsys):
    assert main(
        ["audit", "hare-alg1", "--trials", "6", "--out", str(tmp_path), "--quiet", "--json"]
    ) in (0, 1)
    report = next(tmp_path.rglob("report.json"))
    capsys.readouterr()
    png = tmp_path / "h.png"
    assert main(["show", str(report), "--hist", str(png)]) == 0
    out = capsys.readouterr().out
    assert "audit hare-alg1" in out and png.stat().st_size > 10_000
    assert main(["show", str(report), "--gantt", str(png)]) == 2  # a report has no Gantt chart
