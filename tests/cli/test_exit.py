"""The hetsched script's exit (hetsched.cli.run) while a solver run told to stop is still on."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from support import ctrl_c_as_in_a_terminal

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


def _swallowed_signal_script(signum: int) -> str:
    """A command in which the signal lands inside a ``__del__``, where Python swallows the
    handler's exception ("Exception ignored in ..."), and which then waits in a lock for 600 s
    (past the test's 120 s; only a real signal interrupts such a wait); it prints "finished" if
    nothing stopped it."""
    return textwrap.dedent(
        f"""
        import argparse, os, sys, threading
        import hetsched.cli as cli

        class Dropped:
            def __del__(self):
                os.kill(os.getpid(), {int(signum)})  # the handler runs in here
                for _ in range(10_000):
                    pass

        def work(args):
            Dropped()
            threading.Event().wait(600)  # the rest of the command: a blocking wait
            print("finished")
            return 0

        def build_parser(command):
            parser = argparse.ArgumentParser()
            sub = parser.add_subparsers(dest="command")
            sub.add_parser("work").set_defaults(func=work)
            return parser

        cli.build_parser = build_parser
        sys.exit(cli.main(["work"]))
        """
    )


def test_a_signal_swallowed_in_a_del_still_stops_the_command() -> None:
    """A SIGTERM or Ctrl-C whose exception Python swallowed (it landed in a ``__del__`` or the
    garbage collector's callback) is delivered again: the command stops, it does not run to
    its end and then exit 143 (the clean-clone CI once saw `hetsched compare philly` run on a
    minute past its SIGTERM)."""
    for signum, code, word in (
        (signal.SIGTERM, 143, "terminated"),
        (signal.SIGINT, 130, "interrupted"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", _swallowed_signal_script(signum)],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=ctrl_c_as_in_a_terminal,
        )
        assert done.returncode == code, done.stderr
        assert "finished" not in done.stdout
        assert f"hetsched: {word}" in done.stderr
        assert "Exception ignored" not in done.stderr
