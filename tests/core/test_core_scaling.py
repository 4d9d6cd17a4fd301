"""Integer ticks for the integer solvers (hetsched.core.scaling): float noise forgiven, but a
positive time never becomes 0 ticks (which would be no task, or an arrival moved to 0)."""

import json

import pytest
from support import instance_path

from hetsched.cli import main
from hetsched.core.scaling import ceil_ticks, exact_decimal_scale


@pytest.mark.parametrize(
    "x, scale, ticks",
    [(0.1, 30, 3), (0.3, 10, 3), (0.0, 1000, 0), (1e-12, 1000, 1), (1e-12, 1, 1), (2.0001, 1, 3)],
)
def test_ceil_ticks_forgives_noise_but_not_a_positive_time(x, scale, ticks):
    assert ceil_ticks(x, scale) == ticks


def test_a_time_far_below_a_tick_has_no_exact_scale():
    assert exact_decimal_scale([5.0, 0.25, 0.0]) == 100
    assert exact_decimal_scale([5.0, 1e-12]) is None  # not "the integer 0"


def test_a_tiny_train_time_is_scheduled_and_no_method_claims_a_false_optimum(tmp_path, capsys):
    """A train time of 1.2e-12 s (allowed: above 2^-50 of the span) used to pass for the
    integer 0 at scale 1: CP-SAT's ticks then gave it a whole tick and the portfolio called a
    schedule of 148 optimal while 145 exists. Now the ticks are rounded up and not exact."""
    d = json.loads(instance_path("small-00.json").read_text())
    d["jobs"][5]["train_time"]["k80"] = 1.2e-12
    f = tmp_path / "tiny.json"
    f.write_text(json.dumps(d))
    assert main(["solve", str(f), "--solver", "cpsat", "--time-limit", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] != "optimal" and out["bound"] <= out["objective"]
    assert any("not exact" in n for n in out["notes"])
    assert main(["heuristic", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "feasible"
