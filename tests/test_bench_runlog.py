"""The exact benchmarks' run rows: the largest size proven optimal (hetsched.bench.runlog)."""

from hetsched.bench.runlog import largest_proven


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
