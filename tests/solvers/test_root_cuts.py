"""hetsched/solvers/root_cuts.py: Kelley's loop on the LP relaxation of a Pyomo MILP."""

import pyomo.environ as pe
import pytest

from hetsched.solvers.root_cuts import root_cutting_planes


def _pair(sense=pe.minimize):
    """min -x1 - x2 (or max x1 + x2), x1 + x2 <= 1.5, x binary: the LP gives 1.5, the cut
    x1 + x2 <= 1 closes it to the MILP's 1."""
    m = pe.ConcreteModel()
    m.x = pe.Var([1, 2], domain=pe.Binary)
    sign = -1 if sense == pe.minimize else 1
    m.obj = pe.Objective(expr=sign * (m.x[1] + m.x[2]), sense=sense)
    m.cap = pe.Constraint(expr=m.x[1] + m.x[2] <= 1.5)
    m.cuts = pe.ConstraintList()
    return m


def _clique(m, value) -> int:
    if value(m.x[1]) + value(m.x[2]) > 1 + 1e-9:
        m.cuts.add(m.x[1] + m.x[2] <= 1)
        return 1
    return 0


@pytest.mark.parametrize("sense,lp,closed", [(pe.minimize, -1.5, -1.0), (pe.maximize, 1.5, 1.0)])
def test_the_loop_adds_the_cut_and_reports_the_tightened_bound(sense, lp, closed):
    m = _pair(sense)
    none = root_cutting_planes(m, lambda model, value: 0, 10.0)
    assert none.bound == pytest.approx(lp) and none.cuts == 0
    cut = root_cutting_planes(m, _clique, 10.0)
    assert cut.bound == pytest.approx(closed)
    assert (cut.cuts, cut.rounds, cut.why) == (1, 2, "no violated inequality")
    assert len(m.cuts) == 1  # the cut stays in the model, for the MILP


def test_a_separator_that_never_runs_dry_stops_when_the_bound_stalls():
    """A separator that claims a cut every round but changes nothing: the loop stops once the
    bound has not moved for its stall window, with the LP's bound."""
    m = _pair()
    r = root_cutting_planes(m, lambda model, value: 1, 10.0)
    assert r.why == "stalled" and r.cuts == 0 and r.bound == pytest.approx(-1.5)


def test_a_constant_in_the_cut_body_is_moved_to_its_bounds():
    """A cut written as x1 + x2 + 3 <= 4 is the row x1 + x2 <= 1."""
    m = _pair()

    def shifted(model, value):
        if value(model.x[1]) + value(model.x[2]) > 1 + 1e-9:
            model.cuts.add(model.x[1] + model.x[2] + 3 <= 4)
            return 1
        return 0

    assert root_cutting_planes(m, shifted, 10.0).bound == pytest.approx(-1.0)
