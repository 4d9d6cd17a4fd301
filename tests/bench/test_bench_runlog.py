"""The exact benchmarks' run rows: the largest size proven optimal (hetsched.bench.runlog)."""

from hetsched.bench.runlog import largest_proven, past_the_limit, solve_row


def test_the_largest_size_proven_needs_every_run_at_that_size():
    def row(solver, jobs, status):
        return {"family": "rm-wct", "solver": solver, "gpus": 2, "jobs": jobs, "status": status}

    rows = [
        row("bp", 10, "optimal"),
        row("bp", 20, "optimal"),
        row("bp", 20, "time_limit"),  # one seed of 20 not proven
        row("bp", 30, "optimal"),  # a larger size may still be proven on its own
        row("cpsat", 10, "error"),
    ]
    got = largest_proven(rows, "{family}/{solver}@{gpus}gpus", "jobs")
    assert got == {"rm-wct/bp@2gpus": 30, "rm-wct/cpsat@2gpus": 0}
    assert largest_proven(rows[:3], "{solver}", "jobs") == {"bp": 10}


def test_runs_past_their_limit_plus_grace_are_named_and_rows_without_a_wall_time_are_not():
    def row(solver, limit, wall):
        out = {"solver": solver, "time_limit": limit, "status": "time_limit"}
        return out if wall is None else {**out, "wall_seconds": wall}

    rows = [
        row("colgen", 15.0, 17.2),  # within 15 s + grace (1 + 5%: 16.75 s) + 0.5 s to unwind
        row("highs", 15.0, 18.4),
        row("cpsat", 5.0, 6.8),  # 5 s + 1.25 s + 0.5 s
        row("bp", 5.0, None),  # a row stored before wall times were kept
    ]
    assert past_the_limit(rows, "{solver}@{time_limit:g}") == ["highs@15", "cpsat@5"]


def test_a_solve_row_keeps_the_wall_time_of_the_whole_call():
    from hetsched.instance.generators import small

    got = solve_row(small(0), "hare-sched", "cpsat", 10.0)
    assert got["status"] == "optimal"
    assert got["wall_seconds"] >= got["seconds"] > 0
