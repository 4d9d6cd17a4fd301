"""The status line on stderr: after a while, once per period, never on stdout."""

import io
import time

from hetsched.progress import Heartbeat


def test_heartbeat_reports_while_running_and_stops():
    out = io.StringIO()
    with Heartbeat("solve", limit=60, first=0.05, every=0.05, stream=out):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("hetsched solve: running") for line in lines)
    assert "(time limit 60 s)" in lines[0]
    n = len(lines)
    time.sleep(0.15)
    assert len(out.getvalue().splitlines()) == n  # stopped with the command


def test_a_quick_command_prints_nothing():
    out = io.StringIO()
    with Heartbeat("solve", first=5.0, stream=out):
        pass
    assert out.getvalue() == ""
