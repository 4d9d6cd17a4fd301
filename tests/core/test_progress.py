"""The status line on stderr: after a while, once per period, never on stdout."""

import io
import time

from hetsched.core.progress import Heartbeat


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


def test_tables_align_whatever_the_name_lengths():
    from hetsched.core.tables import aligned

    text = aligned(("policy", "avg_jct"), [("hare-earliest-finish", "12.5"), ("fifo", "3")])
    lines = text.splitlines()
    assert (
        len({len(line) for line in lines}) == 1
    )  # every row as wide: the numbers line up on the right
    assert lines[1].startswith("hare-earliest-finish") and lines[2].endswith("   3")
