"""A linear Pyomo model handed to HiGHS as arrays (:mod:`hetsched.solvers.pyomo_arrays`): the
optimum and the values a hand computation gives, every kind of row, both senses."""

from __future__ import annotations

import pyomo.environ as pe
import pytest

from hetsched.solvers.pyomo_arrays import compile_lp, is_linear_program, solve_pyomo_lp
from hetsched.solvers.result import Status


def _model(sense=pe.maximize) -> pe.ConcreteModel:
    """max 3x + 2y + 5 s.t. x + y <= 4, x + 3y <= 6, x - y = 1, x + y >= 1, x, y >= 0, and w in
    [2, 7] in no row: x - y = 1 and x + 3y <= 6 give y <= 1.25, so x = 2.25, y = 1.25 and the
    optimum is 6.75 + 2.5 + 5 = 14.25 (min: x = 1, y = 0, 8)."""
    m = pe.ConcreteModel()
    m.x = pe.Var(domain=pe.NonNegativeReals)
    m.y = pe.Var(domain=pe.NonNegativeReals)
    m.w = pe.Var(bounds=(2, 7))
    m.a = pe.Constraint(expr=m.x + m.y <= 4)
    m.b = pe.Constraint(expr=m.x + 3 * m.y <= 6)
    m.c = pe.Constraint(expr=m.x - m.y == 1)
    m.d = pe.Constraint(expr=m.x + m.y >= 1)
    m.o = pe.Objective(expr=3 * m.x + 2 * m.y + 5, sense=sense)
    return m


@pytest.mark.parametrize(
    "sense, value, x, y", [(pe.maximize, 14.25, 2.25, 1.25), (pe.minimize, 8.0, 1.0, 0.0)]
)
def test_a_linear_program_meets_its_hand_computed_optimum(sense, value, x, y):
    m = _model(sense)
    assert is_linear_program(m)
    raw = solve_pyomo_lp(m)
    assert raw.status == Status.OPTIMAL
    assert raw.objective == pytest.approx(value) and raw.bound == raw.objective
    assert (pe.value(m.x), pe.value(m.y)) == pytest.approx((x, y))
    assert pe.value(m.w) == 2  # in no row: its lower bound
    assert pe.value(m.o) == pytest.approx(value)


def test_the_compiled_arrays_keep_every_row_and_the_objective_constant():
    c = compile_lp(_model())
    assert c.lp.matrix.shape == (4, 2) and c.sign == -1.0
    assert c.lp.offset == -5.0  # minimizes -(3x + 2y + 5)
    assert sorted(c.lp.row_lower.tolist())[-2:] == [1.0, 1.0]  # the equation and the >= row


def test_a_model_with_an_integer_variable_is_not_a_linear_program():
    m = _model()
    m.k = pe.Var(domain=pe.Binary)
    assert not is_linear_program(m)
