"""A linear Pyomo model handed to HiGHS as arrays (:mod:`hetsched.solvers.pyomo_arrays`): the
optimum and the values a hand computation gives, every kind of row, both senses."""

from __future__ import annotations

import pyomo.environ as pe
import pytest
from support import HAND_OPTIMA, hand_lp

from hetsched.solvers.pyomo_arrays import compile_lp, is_linear_program, solve_pyomo_arrays
from hetsched.solvers.result import Status


@pytest.mark.parametrize("maximize, value, x, y", HAND_OPTIMA)
def test_a_linear_program_meets_its_hand_computed_optimum(maximize, value, x, y):
    m = hand_lp(maximize)
    assert is_linear_program(m)
    raw = solve_pyomo_arrays(m)
    assert raw.status == Status.OPTIMAL
    assert raw.objective == pytest.approx(value) and raw.bound == raw.objective
    assert (pe.value(m.x), pe.value(m.y)) == pytest.approx((x, y))
    assert pe.value(m.w) == 2  # in no row: its lower bound
    assert pe.value(m.o) == pytest.approx(value)


def test_the_compiled_arrays_keep_every_row_and_the_objective_constant():
    c = compile_lp(hand_lp())
    assert c.lp.matrix.shape == (4, 2) and c.sign == -1.0
    assert c.lp.offset == -5.0  # minimizes -(3x + 2y + 5)
    assert sorted(c.lp.row_lower.tolist())[-2:] == [1.0, 1.0]  # the equation and the >= row


def test_a_model_with_an_integer_variable_is_not_a_linear_program():
    m = hand_lp()
    m.k = pe.Var(domain=pe.Binary)
    assert not is_linear_program(m)


@pytest.mark.parametrize("domain", [pe.Binary, pe.NonNegativeIntegers, pe.Integers])
def test_one_integer_element_of_an_indexed_variable_makes_it_not_a_linear_program(domain):
    m = hand_lp()
    m.v = pe.Var(range(5), domain=pe.NonNegativeReals)
    m.b = pe.Block()
    m.b.u = pe.Var(range(3), domain=pe.Reals)
    assert is_linear_program(m)
    m.b.u[2].domain = domain  # the last element of a variable on a sub-block
    assert not is_linear_program(m)
