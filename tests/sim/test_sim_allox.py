"""AlloX against the classical results its matching encodes (Bruno, Coffman and Sethi's model of
R||sum C_j): with every job present at time 0 and one task each, it is Smith's shortest-first
rule on one GPU (optimal for 1||sum C_j), shortest-first list scheduling on identical GPUs
(optimal for P||sum C_j: Conway, Maxwell and Miller), and its first starts on unrelated GPUs are
those of an optimal schedule found by brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hetsched.instance.io import parse_instance
from hetsched.sim.engine import simulate
from hetsched.sim.registry import make_policy


def _instance(times: list[list[float]], identical: bool = False):
    """One-round, one-task jobs, all arriving at 0; ``times[n][m]``: job n's train time on GPU m,
    every GPU its own type (``identical``: one type, the times of GPU 0)."""
    n_gpus = len(times[0])
    kind = [("t0" if identical else f"t{m}") for m in range(n_gpus)]
    if identical:
        times = [row[:1] for row in times]
    return parse_instance(
        {
            "format": "hetsched.instance/1",
            "name": "allox-oracle",
            "cluster": {
                "gpu_types": {k: {} for k in kind},
                "servers": [
                    {"id": "s0", "gpus": [{"id": f"g{m}", "type": kind[m]} for m in range(n_gpus)]}
                ],
            },
            "jobs": [
                {
                    "id": f"J{n}",
                    "arrival": 0.0,
                    "weight": 1.0,
                    "rounds": 1,
                    "tasks_per_round": 1,
                    "train_time": {f"t{m}": t for m, t in enumerate(row)},
                    "sync_time": {f"t{m}": 0.0 for m in range(len(row))},
                }
                for n, row in enumerate(times)
            ],
        }
    )


def _distinct_times(rng, n: int) -> list[float]:
    """n train times, pairwise distinct (no ties for a rule to break)."""
    return [float(x) for x in rng.permutation(np.arange(1, 4 * n + 1))[:n] / 4 + 1]


def _total(run) -> float:
    return sum(run.completion.values())


@pytest.mark.parametrize("seed", range(5))
def test_allox_on_one_gpu_is_shortest_first(seed):
    rng = np.random.default_rng(seed)
    p = _distinct_times(rng, 12)
    run = simulate(_instance([[t] for t in p]), make_policy("allox"))
    assert run.validation.valid
    order = sorted(run.completion, key=run.completion.get)
    assert order == [f"J{n}" for n in np.argsort(p)]
    assert _total(run) == pytest.approx(sum(np.cumsum(sorted(p))), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gpus", [2, 3])
def test_allox_on_identical_gpus_meets_the_shortest_first_optimum(seed, gpus):
    """20 jobs, more than the candidates of the first matching (4 a GPU)."""
    rng = np.random.default_rng(seed)
    p = _distinct_times(rng, 20)
    inst = _instance([[t] * gpus for t in p], identical=True)
    run = simulate(inst, make_policy("allox"))
    assert run.validation.valid
    longest_first = sorted(p, reverse=True)  # k-th from the end on its GPU: ceil(j / |M|)
    optimum = sum(t * math.ceil((j + 1) / gpus) for j, t in enumerate(longest_first))
    assert _total(run) == pytest.approx(optimum, rel=1e-12)


def _brute_force_firsts(times: list[list[float]]) -> tuple[float, set[frozenset]]:
    """min sum C_j over every assignment of jobs to GPUs (each GPU shortest first), and the set
    of first jobs per GPU of every optimal assignment."""
    n, m = len(times), len(times[0])
    best, firsts = math.inf, set()
    for gpu_of in itertools.product(range(m), repeat=n):
        total, first = 0.0, []
        for g in range(m):
            mine = sorted(times[j][g] for j in range(n) if gpu_of[j] == g)
            total += sum(np.cumsum(mine))
            on = [j for j in range(n) if gpu_of[j] == g]
            if on:
                first.append((g, min(on, key=lambda j: times[j][g])))
        if total < best - 1e-9:
            best, firsts = total, {frozenset(first)}
        elif total <= best + 1e-9:
            firsts.add(frozenset(first))
    return best, firsts


@pytest.mark.parametrize("seed", range(8))
def test_allox_starts_the_first_jobs_of_an_optimal_schedule_on_unrelated_gpus(seed):
    rng = np.random.default_rng(seed)
    n, m = 6, 3
    times = [[float(x) for x in row] for row in rng.uniform(1, 20, (n, m)).round(3)]
    run = simulate(_instance(times), make_policy("allox"))
    assert run.validation.valid
    started = frozenset(
        (int(a.gpu[1:]), int(a.job[1:])) for a in run.schedule.assignments if a.start == 0.0
    )
    _, firsts = _brute_force_firsts(times)
    assert started in firsts
