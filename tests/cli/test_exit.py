"""The hetsched script's exit (hetsched.cli.run) while a solver run told to stop is still on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def test_the_script_exits_with_main_s_code_while_highs_runs_on() -> None:
    """A HiGHS run still on at exit makes a normal interpreter exit abort in HiGHS's destructors
    (exit 134, "terminate called"): run() ends the process with main's code, output flushed.
    The run left behind is a market split MILP (tests/support.py), which does not end by itself."""
    script = textwrap.dedent(
        f"""
        import sys, threading
        sys.path.insert(0, {str(TESTS / "solvers")!r})
        sys.path.insert(0, {str(TESTS)!r})
        import hetsched.cli as cli
        import hetsched.solvers.lp_arrays as lp_arrays
        from hetsched.core.interruptible import THREAD_NAME, runs_left
        from test_solver_interrupts import market_split_lp

        def left_running(h):  # as a run that did not stop within its grace
            threading.Thread(target=h.run, name=THREAD_NAME, daemon=True).start()

        def main():
            lp_arrays.run_interruptibly = left_running
            lp_arrays.run_highs(market_split_lp(), {{"time_limit": 300.0}})
            assert runs_left()
            print("the answer so far", end="")  # unflushed: run() must flush it
            return 143

        cli.main = main
        cli.run()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 143, done.stderr
    assert "terminate called" not in done.stderr
    assert done.stdout == "the answer so far"
