"""Hadar's other scheduling policies: the utility as an instance field, makespan and
finish-time fairness as min-max objectives over P1's constraints."""

import dataclasses

import pytest
from support import INSTANCES

from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.hadar.online import hadar_online
from hetsched.hadar.utility import isolated_jct
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import load_instance
from hetsched.solvers.result import Status

TINY = INSTANCES / "hadar" / "hadar_tiny.json"
FIG1 = INSTANCES / "paper" / "hadar_fig1.json"


def _with(inst, **hadar):
    return dataclasses.replace(inst, metadata={"hadar": {**inst.metadata["hadar"], **hadar}})


def test_reciprocal_jct_flows_through_every_component():
    inst = _with(load_instance(TINY), utility="reciprocal-jct")
    p1, p2 = solve(inst, "hadar-p1", "highs"), solve(inst, "hadar-p2", "highs")
    assert p1.status == Status.OPTIMAL and p1.objective == pytest.approx(p2.objective)
    report = validate_decisions(inst, p1.solution.decisions)
    assert report.utility == pytest.approx(sum(1 / d for d in report.jct.values()))
    online = validate_decisions(inst, hadar_online(inst).decisions)
    assert online.valid and online.utility <= p1.objective + 1e-9
    # a different utility gives a different optimum on the same schedules
    assert p1.objective != pytest.approx(solve(load_instance(TINY), "hadar-p1", "highs").objective)


def test_unknown_utility_is_an_input_error():
    with pytest.raises(InputError, match=r"\$.metadata.hadar.utility"):
        hadar_view(_with(load_instance(TINY), utility="happiness"))


def test_finish_time_fairness_utility_uses_the_isolated_jct():
    inst = _with(load_instance(FIG1), utility="finish-time-fairness")
    v = hadar_view(inst)
    # J1's fastest gang: 2 V100 + K80 at min(40, 30) = 30 epochs/slot -> 80/30 slots alone, x J = 3
    assert isolated_jct(v, 0) == pytest.approx(3 * 80 / 30)
    # J3 (2 GPUs, one K80 only): V100 + K80 or 2 V100 at 10 -> 5 slots, x 3
    assert isolated_jct(v, 2) == pytest.approx(15.0)
    run = hadar_online(inst)
    report = validate_decisions(inst, run.decisions)
    assert report.valid and report.utility == pytest.approx(
        sum(
            isolated_jct(v, j) / report.jct[jid]
            for j, jid in enumerate(v.job_ids)
            if jid in report.jct
        )
    )


def test_makespan_and_ftf_on_fig1():
    """Makespan: 6 rounds (Gavel's Fig. 1a also needs 6; Hadar's Fig. 1b 7)."""
    inst = _with(load_instance(FIG1), horizon_slots=9)
    mk = solve(inst, "hadar-p1-makespan", "highs")
    assert mk.status == Status.OPTIMAL and mk.sense == "min" and mk.objective == pytest.approx(6.0)
    report = validate_decisions(inst, mk.solution.decisions, require_all=True)
    assert report.valid and max(report.finish.values()) == 6
    ftf = solve(inst, "hadar-p1-ftf", "highs")
    v = hadar_view(inst)
    assert ftf.status == Status.OPTIMAL and ftf.validation.valid
    rep = validate_decisions(inst, ftf.solution.decisions, require_all=True)
    assert ftf.objective == pytest.approx(
        max(rep.jct[jid] / isolated_jct(v, j) for j, jid in enumerate(v.job_ids))
    )
    # the utility optimum (Fig. 1b) is no fairer than the fairness optimum
    best = solve(inst, "hadar-p1", "highs")
    util = validate_decisions(inst, best.solution.decisions)
    assert (
        max(util.jct[jid] / isolated_jct(v, j) for j, jid in enumerate(v.job_ids))
        >= ftf.objective - 1e-9
    )


def test_min_max_needs_every_job_to_finish():
    inst = _with(load_instance(FIG1), horizon_slots=2)  # J3 cannot finish in 2 slots
    res = solve(inst, "hadar-p1-makespan", "highs")
    assert res.status == Status.INFEASIBLE
