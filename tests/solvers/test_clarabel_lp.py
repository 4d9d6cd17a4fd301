"""Linear programs by Clarabel (:mod:`hetsched.solvers.clarabel_lp`): the hand-computed optimum of
a model with every kind of row and bound, HiGHS's optimum on random bounded LPs, the statuses it
must not confuse, and the refusal of a model with integer variables."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from support import HAND_OPTIMA, hand_lp

from hetsched.core.errors import HetschedError
from hetsched.solvers.clarabel_lp import cone_form, solve_array_lp_clarabel, solve_pyomo_clarabel
from hetsched.solvers.lp_arrays import INF, ArrayLP, solve_array_lp
from hetsched.solvers.result import SolverOptions, Status


@pytest.mark.parametrize("maximize, value, x, y", HAND_OPTIMA)
def test_the_hand_computed_optimum(maximize, value, x, y):
    m = hand_lp(maximize)
    raw = solve_pyomo_clarabel(m)
    assert raw.status == Status.OPTIMAL and "clarabel: Solved" in raw.log
    assert raw.objective == pytest.approx(value, rel=1e-9) and raw.bound == raw.objective
    assert (pe.value(m.x), pe.value(m.y)) == pytest.approx((x, y), abs=1e-8)
    assert pe.value(m.w) == 2  # in no row: its lower bound


def test_the_cone_form_keeps_each_finite_side_once():
    """Rows: an equation, a two-sided row (two inequalities), a >= row; columns: free, boxed,
    bounded below: 1 zero-cone row and 2 + 1 + 2 + 1 non-negative ones."""
    lp = ArrayLP(
        cost=np.zeros(3),
        matrix=sp.csr_matrix(np.array([[1.0, 1, 0], [0, 1, 1], [1, 0, 1]])),
        row_lower=np.array([2.0, -1, 0]),
        row_upper=np.array([2.0, 3, INF]),
        col_lower=np.array([-INF, 0, 1]),
        col_upper=np.array([INF, 5, INF]),
    )
    rows, b, n_eq, n_ineq = cone_form(lp)
    assert (n_eq, n_ineq) == (1, 6) and rows.shape == (7, 3)
    assert b.tolist() == [2.0, 3.0, 1.0, -0.0, 5.0, -0.0, -1.0]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 8))
def test_random_bounded_lps_meet_highs_optimum(seed, n_rows, n_cols):
    """Rows around a random point x0 (so the LP is feasible), columns boxed (so it is bounded):
    Clarabel's optimum is HiGHS's, and its point meets every row and bound."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=(n_rows, n_cols)).astype(float)
    x0 = rng.uniform(-2, 2, size=n_cols)
    ax0 = a @ x0
    kind = rng.integers(0, 4, size=n_rows)  # <=, >=, two-sided, equation
    lo = np.where(kind == 0, -INF, ax0 - rng.uniform(0, 2, size=n_rows))
    hi = np.where(kind == 1, INF, ax0 + rng.uniform(0, 2, size=n_rows))
    lo, hi = np.where(kind == 3, ax0, lo), np.where(kind == 3, ax0, hi)
    lp = ArrayLP(
        cost=rng.normal(size=n_cols),
        matrix=sp.csr_matrix(a),
        row_lower=lo,
        row_upper=hi,
        col_lower=np.full(n_cols, -3.0),
        col_upper=np.full(n_cols, 3.0),
        offset=1.5,
    )
    ours, highs = solve_array_lp_clarabel(lp), solve_array_lp(lp)
    assert highs.status == Status.OPTIMAL and ours.status == Status.OPTIMAL
    assert ours.objective == pytest.approx(highs.objective, rel=1e-7, abs=1e-7)
    x = ours.solution
    assert np.all(a @ x >= lo - 1e-7) and np.all(a @ x <= hi + 1e-7)
    assert np.all(np.abs(x) <= 3 + 1e-7)


def test_an_infeasible_lp_is_infeasible_and_has_no_objective():
    lp = ArrayLP(
        cost=np.ones(1),
        matrix=sp.csr_matrix(np.ones((2, 1))),
        row_lower=np.array([2.0, -INF]),
        row_upper=np.array([INF, 1.0]),
        col_lower=np.zeros(1),
        col_upper=np.full(1, INF),
    )
    raw = solve_array_lp_clarabel(lp)
    assert raw.status == Status.INFEASIBLE and raw.objective is None and raw.bound is None


def test_a_time_limit_it_cannot_meet_is_never_optimal():
    """A limit shorter than one iteration: stopped, no objective, no bound."""
    rng = np.random.default_rng(0)
    n = 400
    lp = ArrayLP(
        cost=-rng.uniform(size=n),
        matrix=sp.random(n, n, density=0.05, random_state=1, format="csr") + sp.identity(n),
        row_lower=np.full(n, -INF),
        row_upper=np.ones(n),
        col_lower=np.zeros(n),
        col_upper=np.full(n, INF),
    )
    raw = solve_array_lp_clarabel(lp, SolverOptions(time_limit=1e-9))
    assert raw.status == Status.TIME_LIMIT and raw.objective is None


def test_a_model_with_integer_variables_is_refused_with_the_reason():
    m = hand_lp()
    m.k = pe.Var(domain=pe.Binary)
    with pytest.raises(HetschedError, match="linear programs; hand has integer variables"):
        solve_pyomo_clarabel(m)


def test_a_first_try_without_an_answer_is_solved_again_with_refinement(monkeypatch):
    """The first try runs without iterative refinement; a status that is not an answer (here:
    every one, by monkeypatching ANSWERS) brings a second try with Clarabel's defaults."""
    import hetsched.solvers.clarabel_lp as clarabel_lp

    first = solve_pyomo_clarabel(hand_lp())
    assert first.status == Status.OPTIMAL and "no iterative refinement" in first.log
    monkeypatch.setattr(clarabel_lp, "ANSWERS", ())
    again = solve_pyomo_clarabel(hand_lp())
    assert again.status == Status.OPTIMAL and "no iterative refinement" not in again.log
    assert again.objective == pytest.approx(first.objective, rel=1e-9)
