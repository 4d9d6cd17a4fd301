"""A time limit on a simulation (``simulate``/``compare --time-limit``): a run not done in time
stops near the limit, writes nothing, and a comparison keeps the policies that finished, says
which did not, and runs those again when resumed."""

from __future__ import annotations

import json
import time

import pytest

from hetsched.sim.registry import make_policy
from hetsched.sim.run import RunNotFinished, compare, run_policy
from hetsched.sim.workloads import gavel_poisson

# Hadar's exact DP on a long queue: minutes per run (README, gang policies)
SLOW = "hadar:dp"


@pytest.fixture(scope="module")
def backlog():
    # the slow policy's imports (numba's: over a second on a loaded machine) done before any
    # time limit runs, so that a limit stops the policy's run rather than its making
    make_policy(SLOW)
    return gavel_poisson(1, n_jobs=200, rate_per_hour=40.0, per_type=4)


def test_a_run_past_its_time_limit_stops_near_it_and_writes_nothing(backlog, tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(RunNotFinished, match=r"hadar:dp did not finish within the time limit"):
        run_policy(backlog, SLOW, out=tmp_path, time_limit=1.0)
    assert time.perf_counter() - t0 < 20
    assert list(tmp_path.iterdir()) == []


def test_a_stopped_run_says_how_far_its_policy_got(backlog):
    """The policy's solver counts at the stop go with it (e.g. Hadar's slots so far), so a run
    that cannot finish still says its rate."""
    with pytest.raises(RunNotFinished) as stopped:
        run_policy(backlog, SLOW, time_limit=1.0)
    solver = stopped.value.solver
    assert solver is not None and solver["slots"] >= 0 and "dp_over_budget" in solver
    assert f"slots {solver['slots']}" in str(stopped.value)


def test_a_stop_that_c_code_replaced_with_its_own_error_is_still_a_stop(backlog, monkeypatch):
    """numpy's structured-array comparison (Hadar's ``np.unique(axis=0)``) reports its own
    TypeError when the time limit's exception is raised inside it: a stop all the same, with
    the policy's counts."""
    from hetsched.hadar import dp_allocation

    real = dp_allocation.SlotArrays.of

    def replaced(*args, **kwargs):
        try:
            arrays = real(*args, **kwargs)
            end = time.perf_counter() + 30  # the limit passes in here, not elsewhere
            while time.perf_counter() < end:
                pass
            return arrays
        except BaseException:
            raise TypeError("Cannot compare structured arrays unless they have a common dtype")

    monkeypatch.setattr(dp_allocation.SlotArrays, "of", replaced)
    with pytest.raises(RunNotFinished) as stopped:
        run_policy(backlog, SLOW, time_limit=1.0)
    assert stopped.value.solver is not None and stopped.value.solver["slots"] >= 0


def test_a_run_within_its_time_limit_is_the_run_without_one(backlog):
    limited = run_policy(backlog, "tiresias", time_limit=600.0)
    plain = run_policy(backlog, "tiresias")
    assert limited["metrics"] == plain["metrics"] and limited["valid"]


def test_compare_reports_the_stopped_policy_and_reruns_only_it(backlog, tmp_path):
    lines: list[str] = []
    result = compare(
        backlog, ["tiresias", SLOW], out=tmp_path, progress=lines.append, time_limit=1.0
    )
    done, stopped = result.rows
    assert done["policy"] == "tiresias" and done["ratio_to_bound"]["avg_jct"] >= 1.0
    assert stopped == {
        "policy": SLOW,
        "seed": 0,
        "workload": backlog.name,
        "level": "job",
        "finished": False,
        "time_limit": 1.0,
    }
    assert any("hadar:dp did not finish within the time limit (1 s)" in x for x in lines)
    saved = json.loads((tmp_path / "compare.json").read_text())
    assert [p.get("finished", True) for p in saved["policies"]] == [True, False]
    stored = [json.loads(x)["policy"] for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert stored == ["tiresias"]
    lines.clear()  # resumed: tiresias kept, the stopped policy tried again
    compare(backlog, ["tiresias", SLOW], out=tmp_path, progress=lines.append, time_limit=1.0)
    assert lines[0] == f"tiresias: already in {tmp_path}, kept"
    assert "hadar:dp did not finish" in lines[1]


def test_simulate_cli_exits_1_with_one_line_and_compare_prints_the_stopped_row_and_exits_1(
    backlog, tmp_path, capsys, monkeypatch
):
    from hetsched.cli import main

    monkeypatch.setattr("hetsched.sim.workloads.load_workload", lambda *a, **k: backlog)
    assert main(["simulate", "gavel-poisson", "--policy", SLOW, "--time-limit", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()  # one line: the stop, how far, nothing written
    assert line.startswith(
        "hetsched simulate: gavel-poisson: hadar:dp did not finish within the time limit (1 s); "
        "by then: slots "
    )
    assert line.endswith("; nothing written")
    args = ["compare", "gavel-poisson", "--policies", f"tiresias,{SLOW}", "--quiet"]
    # the comparison asked for is not all there: exit 1, after the table of what finished
    assert main([*args, "--time-limit", "1", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "hadar:dp: did not finish within the time limit (1 s)" in out
    assert "tiresias" in out
    args = ["compare", "gavel-poisson", "--policies", "tiresias", "--quiet"]
    assert main([*args, "--time-limit", "600", "--out", str(tmp_path)]) == 0  # all finished


def test_the_time_limit_must_be_positive(capsys):
    from hetsched.cli import main

    with pytest.raises(SystemExit) as stop:  # argparse: exit 2, one line naming the option
        main(["simulate", "philly", "--policy", "fifo", "--time-limit", "0"])
    assert stop.value.code == 2
    assert "--time-limit: must be a finite number > 0 (got 0)" in capsys.readouterr().err


def test_the_sim_bench_stops_a_slow_gang_policy_and_says_so(backlog):
    """`hetsched bench sim` gives Hadar's exact DP SLOW_LIMIT seconds on the Philly window (its
    first round takes minutes there): past the limit the row says it stopped."""
    from hetsched.bench.sim import _measure_gang

    row = _measure_gang(backlog, SLOW, time_limit=1.0)
    assert row == {"policy": SLOW, "jobs": 200, "finished": False, "time_limit": 1.0}
    done = _measure_gang(backlog, "tiresias", time_limit=600.0)
    assert done["valid"] and done["seconds"] < 600.0 and "finished" not in done
