"""AlloX's compiled matching (hetsched.sim.policies.allox_matching) against scipy's
linear_sum_assignment: the same optimum always, the same assignment among equal costs (scipy
>= 1.17's choices: an older scipy shifted the costs by their least first and could choose
another of equal cost), and AlloX's first job per GPU as its scipy route chose it."""

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from hetsched.sim.policies.allox_matching import assignment, first_jobs


def _tied(rng: np.random.Generator) -> np.ndarray:
    """A small cost matrix full of ties (few distinct values, repeated columns)."""
    nr = int(rng.integers(1, 7))
    nc = int(rng.integers(nr, 14))
    cost = rng.integers(0, 4, size=(nr, nc)).astype(float) * rng.choice([1.0, 0.1, 7.3])
    if rng.random() < 0.5:  # AlloX's shape: k x p over positions k of identical columns
        p = rng.uniform(0.0, 5.0, (nr, 1)).round(1)
        cost = p * (1 + np.arange(nc) // int(rng.integers(1, 4)))[None, :]
    return cost


@pytest.mark.parametrize("seed", range(300))
def test_the_assignment_is_scipys_among_ties(seed):
    cost = _tied(np.random.default_rng(seed))
    rows, cols = linear_sum_assignment(cost)
    ours = assignment(cost)
    assert cost[rows, ours].sum() == pytest.approx(cost[rows, cols].sum(), rel=1e-12, abs=0)
    assert ours.tolist() == cols.tolist()


@pytest.mark.parametrize("seed", range(50))
def test_the_assignment_is_the_unique_optimum(seed):
    rng = np.random.default_rng(seed)
    nr = int(rng.integers(1, 12))
    cost = rng.uniform(-3.0, 10.0, (nr, int(rng.integers(nr, 30))))
    assert assignment(cost).tolist() == linear_sum_assignment(cost)[1].tolist()


def _first_by_scipy(train, jobs, gpus, left):
    """AlloX's route before it was compiled: the cost tensor in NumPy, scipy's matching."""
    p = left[:, None] * train[jobs[:, None], gpus]
    cost = (np.arange(1, len(jobs) + 1)[:, None, None] * p[None, :, :]).transpose(1, 0, 2)
    rows, cols = linear_sum_assignment(cost.reshape(len(jobs), -1))
    first = {}
    for i, col in zip(rows.tolist(), cols.tolist()):
        k, g = divmod(col, len(gpus))
        if k >= first.get(g, (-1, 0))[0]:
            first[g] = (k, i)
    return [first[g][1] if g in first else -1 for g in range(len(gpus))]


@pytest.mark.parametrize("seed", range(200))
def test_allox_first_jobs_are_its_scipy_routes(seed):
    rng = np.random.default_rng(seed)
    n_jobs, n_types = int(rng.integers(2, 12)), int(rng.integers(1, 4))
    per_type = rng.uniform(0.1, 3.0, (n_jobs, n_types)).round(2)
    if rng.random() < 0.2:
        per_type[rng.integers(n_jobs), rng.integers(n_types)] = 1e9  # NEVER
    train = np.repeat(per_type, int(rng.integers(1, 5)), axis=1)  # identical GPUs: ties
    jobs = rng.choice(n_jobs, size=int(rng.integers(2, n_jobs + 1)), replace=False)
    n_gpus = train.shape[1]
    gpus = np.sort(rng.choice(n_gpus, size=int(rng.integers(1, n_gpus + 1)), replace=False))
    left = rng.integers(1, 40, len(jobs)).astype(float)
    ours = first_jobs(train, jobs, gpus, left).tolist()
    assert ours == _first_by_scipy(train, jobs, gpus, left)
