"""Semi-active re-timing: feasible with no tolerance, never later than needed, and the HiGHS
MILP's schedules never below the proven optima."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import MANIFEST, instance_path

from hetsched.exact.solve import solve
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.instance.io import load_instance
from hetsched.schedule.model import TaskSchedule
from hetsched.schedule.retime import retime
from hetsched.schedule.validate import validate
from hetsched.solvers import Status
from hetsched.testing.strategies import hare_instances

SMALL = sorted(k for k, e in MANIFEST.items() if e["optimum"] is not None and e["tasks"] <= 10)[:4]


@given(hare_instances(max_tasks=10), st.floats(0.0, 1e-6))
def test_retime_repairs_round_off_and_never_delays(inst, eps):
    _, schedule = quick_upper_bound(inst)
    before = validate(inst, schedule)
    assert before.valid
    # what a MILP solver's tolerances do: every start a little early
    early = TaskSchedule.of(
        (
            replace(a, start=max(inst.job(a.job).arrival, a.start - eps))
            for a in schedule.assignments
        ),
        schedule.instance,
        schedule.instance_hash,
    )
    fixed = retime(inst, early)
    report = validate(inst, fixed, tol=0.0)
    assert report.valid, report.violations[:2]
    assert (
        report.objective <= before.objective + 1e-9
    )  # semi-active: no task later than in a valid schedule


@pytest.mark.parametrize("name", SMALL)
def test_highs_milp_schedules_are_exactly_feasible_and_not_below_the_optimum(name):
    inst = load_instance(instance_path(name))
    res = solve(inst, "hare-sched", "highs", time_limit=60)
    assert res.status == Status.OPTIMAL
    assert validate(inst, res.solution, tol=0.0).valid
    assert res.objective >= MANIFEST[name]["optimum"] - 1e-12
    assert res.objective == pytest.approx(MANIFEST[name]["optimum"], rel=1e-9)
