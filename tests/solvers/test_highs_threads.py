"""HiGHS sizes one thread pool per process at its first run (hetsched/solvers/lp_arrays.py,
size_thread_pool): runs that ask for other sizes, one after another in one process, must each
solve (they returned no status, "Not Set", before the pool was reset)."""

import pytest
from support import INSTANCES

from hetsched.exact.solve import solve
from hetsched.instance.io import load_instance
from hetsched.solvers import Status


@pytest.mark.parametrize(
    "model, solver", [("hare-interval-lp", "auto"), ("hare-sched-rl", "highs")]
)
def test_highs_runs_on_any_thread_count_in_one_process(model, solver):
    inst = load_instance(INSTANCES / "paper" / "hare_fig5.json")
    values = []
    for threads in (1, 2, None, 1, 2):
        res = solve(inst, model, solver, time_limit=60, threads=threads)
        assert res.status == Status.OPTIMAL, (threads, res.log)
        values.append(res.objective)
    assert max(values) - min(values) <= 1e-6 * max(1.0, abs(values[0]))
