"""The max-min allocation LP by decomposition (:mod:`hetsched.gavel.max_min`) against the
same LP solved whole by HiGHS, its pricing against an LP per price vector, and one GPU type
against the closed form."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetsched.gavel.max_min as max_min
from hetsched.gavel.fast import solve_max_min
from hetsched.gavel.max_min import best_allocations, max_min_by_decomposition
from hetsched.solvers.lp_arrays import INF, ArrayLP, run_highs
from hetsched.solvers.result import Status


def _lp(seed: int, n: int, k: int, distinct: bool = True, zeros: float = 0.0):
    """Rows a (n x k), scale factors from {1, 2, 4, 8}, k type counts; ``zeros``: the chance a
    job cannot use a type (a 0 rate; every job keeps one type it can use)."""
    rng = np.random.default_rng(seed)
    if distinct:
        a = rng.uniform(0.1, 10.0, (n, k))
    else:  # few kinds of job: many identical rows
        a = rng.uniform(0.1, 10.0, (5, k))[rng.integers(0, 5, n)]
    if zeros:
        off = rng.random((n, k)) < zeros
        off[np.arange(n), rng.integers(0, k, n)] = False
        a = np.where(off, 0.0, a)
    scale = rng.choice([1.0, 2.0, 4.0, 8.0], n)
    count = rng.integers(1, max(2, n), k).astype(float)
    return a, scale, count


def _check(a, scale, count, x):
    assert np.all(x >= 0)
    assert np.all(x.sum(axis=1) <= 1 + 1e-9)
    assert np.all(scale @ x <= count + 1e-7 * np.maximum(1.0, count))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("distinct, zeros", [(True, 0.0), (False, 0.0), (True, 0.3)])
def test_the_decomposition_meets_the_whole_lp(seed, k, distinct, zeros):
    a, scale, count = _lp(seed, 60, k, distinct, zeros)
    converged, z, upper, x, _ = max_min_by_decomposition(a, scale, count)
    _, whole, _, _ = solve_max_min(a, scale, count, merge=False, method="ipm")
    assert converged
    _check(a, scale, count, x)
    assert z == pytest.approx(float((a * x).sum(axis=1).min()), rel=1e-12)
    assert z == pytest.approx(whole, rel=1e-8)
    assert upper >= whole - 1e-8 * whole  # the Lagrangian bound is an upper bound


@pytest.mark.parametrize("seed", range(4))
def test_merged_classes_reach_the_same_optimum(seed):
    a, scale, count = _lp(seed, 200, 3, distinct=False)
    notes: list[str] = []
    status, z, x, classes = solve_max_min(a, scale, count, notes=notes)
    _, whole, _, _ = solve_max_min(a, scale, count, merge=False, method="ipm")
    assert status == Status.OPTIMAL and classes < 200
    assert z == pytest.approx(whole, rel=1e-8)
    _check(a, scale, count, x)
    assert notes and notes[0].startswith("decomposition:")


def test_one_job_filling_a_type_gets_its_fastest_type():
    a, scale, count = np.array([[3.2045, 10.1435, 10.652]]), np.array([8.0]), np.full(3, 8.0)
    status, z, x, _ = solve_max_min(a, scale, count, merge=False, method="interior")
    assert status == Status.OPTIMAL and z == pytest.approx(10.652, rel=1e-7)
    assert x[0, 2] == pytest.approx(1.0, abs=1e-6)


def test_the_interior_method_stops_inside_the_optimal_face():
    """Two identical jobs, two types of one GPU each, both rates 1: every optimum gives each job
    the whole time, x = [[p, 1 - p], [1 - p, p]], and the face's centre is p = 1/2. ``interior``
    (Gavel's convention: HiGHS's interior point, no crossover) stops there, as Gavel's ECOS
    does; the simplex method stops at a vertex, p = 0 or 1."""
    a, scale, count = np.ones((2, 2)), np.ones(2), np.ones(2)
    status, z, x, _ = solve_max_min(a, scale, count, merge=False, method="interior")
    _, vertex_z, vertex, _ = solve_max_min(a, scale, count, merge=False, method="simplex")
    assert status == Status.OPTIMAL
    assert z == pytest.approx(1.0, rel=1e-7) and vertex_z == pytest.approx(1.0, rel=1e-12)
    _check(a, scale, count, np.clip(x, 0, None))
    assert np.abs(x - 0.5).max() <= 1e-3
    assert np.isin(np.round(vertex, 9), [0.0, 1.0]).all()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 12), k=st.integers(1, 4))
def test_the_interior_method_reaches_the_vertex_optimum(seed, n, k):
    """Also on one job whose gang fills a type (found by the gang bounds' property test: HiGHS's
    presolve left the interior point method without a status there)."""
    a, scale, count = _lp(seed, n, k, distinct=seed % 2 == 0, zeros=0.3 * (seed % 3 == 0))
    if seed % 5 == 0:
        scale = np.minimum(scale, count.min())  # a gang as large as the smallest type
    status, z, x, _ = solve_max_min(a, scale, count, merge=False, method="interior")
    _, vertex, _, _ = solve_max_min(a, scale, count, merge=False, method="simplex")
    assert status == Status.OPTIMAL
    assert z == pytest.approx(vertex, rel=1e-6)
    assert z <= vertex * (1 + 1e-9)
    _check(a, scale, count, x)


def test_gavels_convention_solves_at_the_interior_and_ours_at_a_vertex():
    from hetsched.sim.gang_policies.gavel import lp_method

    assert lp_method("gavel") == ("interior", False)
    assert lp_method("hetsched") == ("ipm", True)


@pytest.mark.parametrize("seed", range(5))
def test_one_gpu_type_meets_the_closed_form(seed):
    """One type: x_j = z / a_j, so z* = min(min_j a_j, N / sum_j s_j / a_j)."""
    a, scale, count = _lp(seed, 40, 1)
    closed = min(a.min(), count[0] / float((scale / a[:, 0]).sum()))
    converged, z, _, _, _ = max_min_by_decomposition(a, scale, count)
    assert converged and z == pytest.approx(closed, rel=1e-9)


def _pricing_lp(a, scale, lam) -> float:
    """max z - lam . sum_j s_j x_j s.t. a_j . x_j >= z, sum x_j <= 1, x >= 0, z <= min_j
    max_r a_jr (one LP)."""
    n, k = a.shape
    nv = n * k + 1
    rows, cols, vals = [], [], []
    for j in range(n):
        for r in range(k):
            rows += [j, n + j]
            cols += [j * k + r, j * k + r]
            vals += [-a[j, r], 1.0]
        rows.append(j)
        cols.append(n * k)
        vals.append(1.0)
    import scipy.sparse as sp

    m = sp.csc_matrix((vals, (rows, cols)), shape=(2 * n, nv))
    cost = np.concatenate([np.repeat(scale, k) * np.tile(lam, n), [-1.0]])
    lp = ArrayLP(
        cost,
        m,
        np.full(2 * n, -INF),
        np.concatenate([np.zeros(n), np.ones(n)]),
        np.zeros(nv),
        np.full(nv, INF),
    )
    h, _ = run_highs(lp)
    return -h.getInfo().objective_function_value


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 12),
    k=st.integers(1, 4),
    lam_scale=st.sampled_from([1e-4, 1e-2, 1.0]),
    free_type=st.booleans(),
)
def test_pricing_is_the_best_allocation_at_its_prices(seed, n, k, lam_scale, free_type):
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((n, k)) < 0.2, 0.0, rng.uniform(0.1, 10.0, (n, k)))
    a[np.arange(n), rng.integers(0, k, n)] = rng.uniform(0.1, 10.0, n)
    scale = rng.choice([1.0, 2.0, 4.0], n)
    lam = rng.uniform(0.0, 1.0, k) * lam_scale
    if free_type:
        lam[rng.integers(0, k)] = 0.0
    z, x = best_allocations(a, scale, lam)[0]
    assert np.all(x >= 0) and np.all(x.sum(axis=1) <= 1 + 1e-12)
    assert np.all((a * x).sum(axis=1) >= z - 1e-9 * max(1.0, z))
    value = z - float(lam @ (scale @ x))
    assert value == pytest.approx(_pricing_lp(a, scale, lam), rel=1e-9, abs=1e-12)


def test_a_run_that_does_not_converge_goes_to_highs(monkeypatch):
    a, scale, count = _lp(0, 80, 3)
    monkeypatch.setattr(max_min, "MAX_ROUNDS", 2)
    notes: list[str] = []
    status, z, x, _ = solve_max_min(a, scale, count, merge=False, notes=notes)
    _, whole, _, _ = solve_max_min(a, scale, count, merge=False, method="ipm")
    assert status == Status.OPTIMAL and z == pytest.approx(whole, rel=1e-12)
    assert "HiGHS interior point instead" in notes[0]


def _stacked(ca, demand, count, epigraph):
    """The constraint rows as the three blocks (fair, share, cap) stacked: the construction
    ``_constraints`` replaced, kept as its oracle."""
    import scipy.sparse as sp

    n, k = ca.shape
    nv = n * k + (1 if epigraph else 0)
    jj, cols = np.repeat(np.arange(n), k), np.arange(n * k)
    share = sp.coo_matrix((np.ones(n * k), (jj, cols)), shape=(n, nv))
    cap = sp.coo_matrix((np.repeat(demand, k), (np.tile(np.arange(k), n), cols)), shape=(k, nv))
    blocks, upper = [share, cap], [np.ones(n), count.astype(float)]
    if epigraph:
        fair = sp.coo_matrix(
            (
                np.concatenate([-ca.ravel(), np.ones(n)]),
                (np.concatenate([jj, np.arange(n)]), np.concatenate([cols, np.full(n, n * k)])),
            ),
            shape=(n, nv),
        )
        blocks, upper = [fair, *blocks], [np.zeros(n), *upper]
    return sp.vstack(blocks).tocsc(), np.concatenate(upper)


@pytest.mark.parametrize("seed", range(20))
def test_the_lp_rows_are_built_entry_for_entry_as_the_stacked_blocks(seed):
    """HiGHS gets the same matrix (entries, order, explicit zeros, signs), so the same vertex."""
    from hetsched.gavel.fast import _constraints

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 30)), int(rng.integers(1, 5))
    ca = rng.uniform(0, 1, (n, k))
    ca[rng.uniform(size=(n, k)) < 0.3] = 0.0  # types a job cannot use
    demand = rng.choice([1.0, 2.0, 4.0, 8.0], n) * rng.integers(1, 5, n)
    count = rng.integers(1, 30, k)
    for epigraph in (True, False):
        (want, want_upper), (got, got_upper) = (
            _stacked(ca, demand, count, epigraph),
            _constraints(ca, demand, count, epigraph),
        )
        assert want.shape == got.shape
        for field in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(want, field), getattr(got, field)), field
        assert np.array_equal(np.signbit(want.data), np.signbit(got.data))
        assert np.array_equal(want_upper, got_upper)
