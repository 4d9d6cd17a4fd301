"""A learned interference predictor (the role of Harmony's reward model, ToN'22 Sec. VI): trained
by supervised learning on simulated samples (random placements measured under the speed model
with multiplicative noise, as Harmony measures jobs for 5 minutes on its testbed), then used as
the reward model that ranks placements (:func:`hetsched.harmony.heuristics.greedy_by_reward`).

Harmony uses a Transformer; ours is a small linear model per job model a (ridge regression,
numpy only) on features of job n's placement:

    g_n = [1, servers spanned - 1, for each model b: the most jobs of model b next to n on one
           of n's servers, and the distinct jobs of model b next to n on any of n's servers]

predicting the speed fraction f_n = c_n / b_n, clipped to [f_min, 1]. The loss reported is the
paper's relative error L(c, c') = mean |c'_n - c_n| / c'_n on held-out samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.harmony import data
from hetsched.harmony.evaluate import server_factor, speed_fractions
from hetsched.harmony.problem import placement_view
from hetsched.harmony.view import EPS, PlacementView


@dataclass(frozen=True)
class InterferencePredictor:
    models: tuple[str, ...]  # the vocabulary (one-hot x_n of Sec. V.A)
    theta: np.ndarray  # [model, feature]
    train_error: float  # relative error L on the training samples
    test_error: float  # on held-out samples
    samples: int

    def features(self, view: PlacementView, tasks: np.ndarray) -> np.ndarray:
        """[n, 2 + 2L] features g_n (rows of jobs with no task are zero)."""
        index = {m: k for k, m in enumerate(self.models)}
        missing = sorted(set(view.models) - set(index))
        if missing:
            raise HetschedError(
                f"the interference predictor was not trained on model '{missing[0]}' "
                f"(known: {', '.join(self.models)})"
            )
        L = len(self.models)
        u = (tasks > 0).astype(float)
        onehot = np.zeros((view.n_jobs, L))
        onehot[np.arange(view.n_jobs), [index[m] for m in view.models]] = 1.0
        per_server = u.T[:, :, None] * onehot[None, :, :]  # [s, j, b]
        counts = per_server.sum(axis=1)  # [s, b]: jobs of model b on server s
        g = np.zeros((view.n_jobs, 2 + 2 * L))
        for n in range(view.n_jobs):
            mine = u[n] > 0
            if not mine.any():
                continue
            others = counts[mine] - onehot[n][None, :]  # n itself does not interfere with n
            near = (u[:, mine].sum(axis=1) > 0).astype(float)
            near[n] = 0.0
            g[n, 0] = 1.0
            g[n, 1] = mine.sum() - 1
            g[n, 2 : 2 + L] = others.max(axis=0)
            g[n, 2 + L :] = near @ onehot
        return g

    def speed_fractions(self, view: PlacementView, tasks: np.ndarray) -> np.ndarray:
        """Predicted max(f_min, ...) per job, 0 for jobs with no task (a speed model for the greedy)."""
        g = self.features(view, tasks)
        rows = self.theta[[self.models.index(m) for m in view.models]]
        f = np.clip((g * rows).sum(axis=1), view.min_speed_fraction, 1.0)
        return np.where(g[:, 0] > 0, f * server_factor(view, tasks), 0.0)


def _random_placement(view: PlacementView, rng: np.random.Generator) -> np.ndarray:
    """Tasks of the new jobs on random servers with room (a job that does not fit waits)."""
    used = view.fixed_usage().copy()
    tasks = view.fixed_workers + view.fixed_ps
    for n in np.flatnonzero(view.new):
        demands = [view.ps_demand[n]] * int(view.parameter_servers[n]) + [
            view.worker_demand[n]
        ] * int(view.workers[n])
        trial_used, trial = used.copy(), tasks[n].copy()
        ok = True
        for d in demands:
            room = np.flatnonzero((trial_used + d <= view.capacity + EPS).all(axis=1))
            if room.size == 0:
                ok = False
                break
            s = int(room[rng.integers(room.size)])
            trial_used[s] += d
            trial[s] += 1
        if ok:
            used, tasks[n] = trial_used, trial
    return tasks


def simulated_samples(
    seed: int, count: int, noise: float = 0.03
) -> list[tuple[PlacementView, np.ndarray, np.ndarray]]:
    """``count`` intervals (view, tasks, measured speed fractions; NaN for jobs not placed)."""
    from hetsched.harmony.generate import random_instance

    rng = np.random.default_rng([seed, 7])
    out = []
    for _ in range(count):
        inst = random_instance(
            rng,
            n_servers=int(rng.integers(2, 7)),
            n_new=int(rng.integers(1, 6)),
            n_old=int(rng.integers(0, 5)),
        )
        view = placement_view(inst)
        tasks = _random_placement(view, rng)
        f = speed_fractions(view, tasks) * np.exp(rng.normal(0.0, noise, view.n_jobs))
        out.append((view, tasks, np.where(tasks.sum(axis=1) > 0, f, np.nan)))
    return out


def _relative_error(pred: InterferencePredictor, samples) -> float:
    errs = []
    for view, tasks, f in samples:
        p = pred.speed_fractions(view, tasks)
        ok = ~np.isnan(f)
        errs.extend(np.abs(f[ok] - p[ok]) / f[ok])
    return float(np.mean(errs)) if errs else float("nan")


def train_predictor(
    seed: int = 0,
    samples: int = 2000,
    noise: float = 0.03,
    ridge: float = 1e-3,
    models: tuple[str, ...] = data.MODELS,
) -> InterferencePredictor:
    """Fit on ``samples`` simulated intervals (80% train, 20% held out); deterministic per seed."""
    all_samples = simulated_samples(seed, samples, noise)
    cut = int(0.8 * len(all_samples))
    train, test = all_samples[:cut], all_samples[cut:]
    L = len(models)
    shell = InterferencePredictor(models, np.zeros((L, 2 + 2 * L)), 0.0, 0.0, len(all_samples))
    X: list[list[np.ndarray]] = [[] for _ in models]
    y: list[list[float]] = [[] for _ in models]
    for view, tasks, f in train:
        g = shell.features(view, tasks)
        for n in range(view.n_jobs):
            if not np.isnan(f[n]):
                X[models.index(view.models[n])].append(g[n])
                y[models.index(view.models[n])].append(float(f[n]))
    theta = np.zeros((L, 2 + 2 * L))
    for a in range(L):
        if not X[a]:
            theta[a, 0] = 1.0  # never seen: predict standalone speed
            continue
        A, b = np.array(X[a]), np.array(y[a])
        theta[a] = np.linalg.solve(A.T @ A + ridge * np.eye(A.shape[1]), A.T @ b)
    fitted = InterferencePredictor(models, theta, 0.0, 0.0, len(all_samples))
    return InterferencePredictor(
        models,
        theta,
        _relative_error(fitted, train),
        _relative_error(fitted, test),
        len(all_samples),
    )


@lru_cache(maxsize=4)
def default_predictor(seed: int = 0) -> InterferencePredictor:
    """The predictor every command uses unless told otherwise (trained once per process)."""
    return train_predictor(seed)
