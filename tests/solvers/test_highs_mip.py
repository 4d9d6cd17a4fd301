"""A Pyomo MILP handed to HiGHS as arrays (:func:`hetsched.solvers.highs.solve_pyomo_highs`), in
this process and in a child process ended at its deadline (:mod:`hetsched.solvers.child`)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pyomo.environ as pe
import pytest
from support import hand_lp

import hetsched.solvers.highs as highs
from hetsched.solvers.child import call_in_child
from hetsched.solvers.result import SolverOptions, Status

#: hand_lp with x and y integer: x - y = 1 and x + 3y <= 6 give y <= 1.25, so y = 1, x = 2 and
#: the maximum is 6 + 2 + 5 = 13; the minimum (x + y >= 1) is x = 1, y = 0: 8
INTEGER_OPTIMA = [(True, 13.0, 2.0, 1.0), (False, 8.0, 1.0, 0.0)]


def hand_milp(maximize: bool):
    m = hand_lp(maximize)
    m.x.domain = m.y.domain = pe.NonNegativeIntegers
    return m


@pytest.mark.parametrize("in_child", [False, True])
@pytest.mark.parametrize("maximize, value, x, y", INTEGER_OPTIMA)
def test_a_milp_meets_its_hand_computed_optimum(monkeypatch, in_child, maximize, value, x, y):
    if in_child:
        monkeypatch.setattr(highs, "CHILD_NONZEROS", 0)
    m = hand_milp(maximize)
    raw = highs.solve_pyomo_highs(m, SolverOptions(time_limit=60))
    assert raw.status == Status.OPTIMAL
    assert raw.objective == pytest.approx(value) and raw.bound == pytest.approx(value)
    assert (pe.value(m.x), pe.value(m.y)) == pytest.approx((x, y))
    assert pe.value(m.w) == 2  # in no row: its lower bound
    assert "a MILP, as arrays" in raw.log
    assert _children(os.getpid()) == []  # no solver child left running


def test_an_infeasible_milp_says_so_without_a_solution():
    m = hand_milp(True)
    m.e = pe.Constraint(expr=m.x + m.y >= 5)  # x + y <= 4
    raw = highs.solve_pyomo_highs(m, SolverOptions(time_limit=60))
    assert raw.status == Status.INFEASIBLE
    assert raw.objective is None and raw.value is None


def test_a_child_that_has_not_answered_is_a_time_limit_without_a_solution(monkeypatch):
    monkeypatch.setattr(highs, "CHILD_NONZEROS", 0)
    monkeypatch.setattr(highs, "call_in_child", lambda fn, args, wait: (False, None))
    m = hand_milp(True)
    raw = highs.solve_pyomo_highs(m, SolverOptions(time_limit=5))
    assert raw.status == Status.TIME_LIMIT
    assert raw.objective is None and raw.bound is None and raw.value is None
    assert "ended at its time limit in a child process" in raw.log


def test_a_child_answers_raises_or_is_ended_at_its_deadline():
    assert call_in_child(math.sqrt, (4.0,), None) == (True, 2.0)
    with pytest.raises(ValueError):
        call_in_child(math.sqrt, (-1.0,), None)
    # a child that cannot answer within the wait (it sleeps for ten minutes) is ended
    assert call_in_child(time.sleep, (600,), 0.2) == (False, None)
    assert _children(os.getpid()) == []  # no solver child left running


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` and that run a solver child (Linux /proc)."""
    out: list[int] = []
    if not Path("/proc").is_dir():  # not Linux: nothing to look at
        return out
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                line = (entry / "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid and b"hetsched.solvers.child" in line:
                out.append(int(entry.name))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_ends_when_its_parent_is_killed_without_cleanup():
    code = "import time\nfrom hetsched.solvers.child import call_in_child\ncall_in_child(time.sleep, (600,), None)\n"
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        for _ in range(600):  # the child is spawned (importing takes a moment)
            kids = _children(parent.pid)
            if kids:
                break
            time.sleep(0.1)
        assert kids, "the parent spawned no child"
    finally:
        parent.kill()  # SIGKILL: no finally, no atexit in the parent
        parent.wait()
    for _ in range(600):  # the kernel sends the child SIGTERM at its parent's death
        if not any(_running(k) for k in kids):
            break
        time.sleep(0.1)
    assert not any(_running(k) for k in kids)


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (one nobody has reaped yet has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
