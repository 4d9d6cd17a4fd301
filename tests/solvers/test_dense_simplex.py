"""The dense simplex for tiny LPs (:mod:`hetsched.solvers.dense_simplex`): its optimum is HiGHS's
on random bounded LPs, every answer carries a dual certificate that holds, and it declines (None)
what it cannot prove rather than answer wrongly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from hetsched.solvers.dense_simplex import MAX_ROWS, certified, solve_dense


def _random_lp(seed: int, m: int, n: int, degenerate: bool):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-2.0, 5.0, (m, n)) * (rng.random((m, n)) < 0.6)
    A[0] = rng.uniform(0.5, 2.0, n)  # a positive row keeps the LP bounded
    b = rng.uniform(0.0, 10.0, m)
    if degenerate:
        b[rng.random(m) < 0.5] = 0.0
    b[0] = max(b[0], 1.0)
    c = rng.uniform(-1.0, 3.0, n)
    return A, b, c


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    m=st.integers(1, 25),
    n=st.integers(1, 25),
    degenerate=st.booleans(),
)
def test_the_optimum_is_highs_and_the_certificate_holds(seed, m, n, degenerate):
    A, b, c = _random_lp(seed, m, n, degenerate)
    found = solve_dense(A, b, c)
    ref = linprog(-c, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
    assert ref.status == 0  # bounded by row 0, feasible at x = 0
    assert found is not None
    assert found.value == pytest.approx(-ref.fun, rel=1e-8, abs=1e-9)
    assert np.all(found.x >= 0) and np.all(A @ found.x <= b + 1e-9 * (1 + np.abs(b)))
    assert np.all(found.y >= -1e-12) and certified(A, b, c, found.x, found.y)
    assert float(b @ found.y) == pytest.approx(found.value, rel=1e-8, abs=1e-9)


def test_a_wrong_certificate_is_refused():
    A, b, c = np.array([[1.0, 1.0]]), np.array([1.0]), np.array([1.0, 2.0])
    found = solve_dense(A, b, c)
    assert found is not None and found.value == pytest.approx(2.0)
    assert certified(A, b, c, found.x, found.y)
    assert not certified(A, b, c, np.array([1.0, 0.0]), found.y)  # not optimal: gap 1
    assert not certified(A, b, c, found.x, np.array([1.0]))  # duals not feasible
    assert not certified(A, b, c, np.array([0.0, 2.0]), np.array([2.0]))  # x not feasible


def test_what_it_cannot_prove_it_declines():
    assert solve_dense(np.array([[-1.0]]), np.array([1.0]), np.array([1.0])) is None  # unbounded
    assert solve_dense(np.array([[1.0]]), np.array([-1.0]), np.array([1.0])) is None  # b < 0
    assert solve_dense(np.array([[np.nan]]), np.array([1.0]), np.array([1.0])) is None
    big = np.ones((MAX_ROWS + 1, 2))
    assert solve_dense(big, np.ones(MAX_ROWS + 1), np.ones(2)) is None  # HiGHS's size
    A, b, c = _random_lp(3, 20, 20, True)
    assert solve_dense(A, b, c, max_pivots=1) is None  # the pivot cap


def test_the_same_input_gives_the_same_vertex():
    A, b, c = _random_lp(7, 15, 30, True)
    first, second = solve_dense(A, b, c), solve_dense(A.copy(), b.copy(), c.copy())
    assert first is not None and second is not None
    assert first.x.tobytes() == second.x.tobytes() and first.pivots == second.pivots


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), m=st.integers(1, 15), n=st.integers(2, 15))
def test_the_tiebreak_is_the_best_second_objective_over_the_optimal_face(seed, m, n):
    A, b, c = _random_lp(seed, m, n, True)
    rng = np.random.default_rng(seed + 1)
    c = np.round(c)  # integer objectives: optimal faces of more than one point are common
    second = rng.uniform(-1.0, 2.0, n)
    found = solve_dense(A, b, c, second)
    plain = solve_dense(A, b, c)
    assert found is not None and plain is not None
    assert found.value == pytest.approx(plain.value, rel=1e-9, abs=1e-9)  # still optimal
    assert certified(A, b, c, found.x, found.y)
    face = linprog(  # max second.x over {A x <= b, c.x >= optimum}
        -second,
        A_ub=np.vstack([A, -c]),
        b_ub=np.append(b, -plain.value + 1e-9 * (1 + abs(plain.value))),
        bounds=(0, None),
        method="highs",
    )
    assert face.status == 0
    assert float(second @ found.x) == pytest.approx(-face.fun, rel=1e-6, abs=1e-6)
