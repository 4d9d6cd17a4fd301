"""Fast (vectorized) evaluation of the speed model of :mod:`hetsched.harmony.problem` for the
search methods: heuristics, enumeration and predictor training call it thousands of times.
Results they return are still checked by :func:`hetsched.harmony.problem.check_placement`,
which recomputes the reward from the definition with plain loops."""

from __future__ import annotations

import numpy as np

from hetsched.harmony.view import PlacementView


def speed_fractions(view: PlacementView, tasks: np.ndarray) -> np.ndarray:
    """max(f_min, 1 - slow_n - comm_n) for every job, 0 for jobs with no task; ``tasks[n, s]``
    counts job n's tasks (workers + parameter servers, earlier jobs included) on server s."""
    u = (tasks > 0).astype(float)
    co = view.interference @ u  # [n, s]: slowdown of n from the jobs present on s
    slow = np.where(u > 0, co, 0.0).max(axis=1)
    spans = u.sum(axis=1)
    f = np.maximum(view.min_speed_fraction, 1.0 - slow - view.communication * (spans - 1))
    return np.where(spans > 0, f * server_factor(view, tasks), 0.0)


#: elements of the (candidates, jobs, servers) arrays :func:`candidate_rewards` makes at once
CHUNK_ELEMENTS = 1 << 20


def candidate_rewards(
    view: PlacementView, tasks: np.ndarray, n: int, added: np.ndarray, counted: np.ndarray
) -> np.ndarray:
    """The reward (eq. (1)) over the jobs where ``counted`` is True, for every candidate row c of
    ``added`` (tasks of job n per server) added to ``tasks``: what :func:`speed_fractions` gives on
    each candidate's task matrix, computed for all of them at once. A candidate changes only row
    n, so only the slowdowns from job n move (the interference of n on each job, where n's
    presence changes), its own slowdown, span and server factor."""
    u = (tasks > 0).astype(float)
    out = np.empty(len(added))
    if not len(added):
        return out
    step = max(1, CHUNK_ELEMENTS // max(1, view.n_jobs * view.n_servers))
    others = None if view.server_speed is None else server_factor(view, tasks)
    if (
        view.min_speed_fraction <= 1.0
        and not view.communication.any()
        and not view.interference.any()
    ):
        return _separable_rewards(view, u, n, added, counted, others, step, out)
    return _general_rewards(view, u, n, added, counted, others, step, out)


def _general_rewards(view, u, n, added, counted, others, step, out) -> np.ndarray:
    """:func:`candidate_rewards` with interference and communication costs."""
    weight = view.weight()
    co = view.interference @ u  # [j, s] before the candidate
    for lo in range(0, len(added), step):
        row = u[n][None, :] + added[lo : lo + step]  # [c, s]: > 0 where n has tasks
        r = (row > 0).astype(float)
        uc = np.repeat(u[None], len(row), axis=0)  # [c, j, s]
        uc[:, n, :] = r
        cc = co[None] + view.interference[None, :, n, None] * (r - u[n])[:, None, :]
        slow = np.where(uc > 0, cc, 0.0).max(axis=2)
        spans = uc.sum(axis=2)
        f = np.maximum(view.min_speed_fraction, 1.0 - slow - view.communication * (spans - 1))
        if others is not None:
            factor = np.repeat(others[None], len(row), axis=0)
            own = np.where(row > 0, view.server_speed[n][None, :], np.inf).min(axis=1)
            factor[:, n] = np.where(np.isfinite(own), own, 1.0)
            f = f * factor
        f = np.where(spans > 0, f, 0.0)
        out[lo : lo + step] = f[:, counted] @ weight[counted]
    return out


def _separable_rewards(view, u, n, added, counted, others, step, out) -> np.ndarray:
    """:func:`candidate_rewards` where no job slows another and none pays for spanning servers
    (the gang simulator's Harmony policy): every speed fraction is then 1 before the server
    factor, so a candidate moves job n's own factor alone. The same array, built without the
    (candidates, jobs, servers) steps, goes through the same product, so the values are the same
    to the bit."""
    tasks_n = u[n] > 0  # where job n has tasks already (u is 0/1)
    present = u.sum(axis=1) > 0
    base = np.where(present, 1.0 if others is None else others, 0.0)
    weight = view.weight()[counted]
    for lo in range(0, len(added), step):
        row = tasks_n[None, :] | (added[lo : lo + step] > 0)  # [c, s]: n's servers
        f = np.repeat(base[None], len(row), axis=0)
        if others is None:
            own = 1.0
        else:
            own = np.where(row, view.server_speed[n][None, :], np.inf).min(axis=1)
            own = np.where(np.isfinite(own), own, 1.0)
        f[:, n] = np.where(row.any(axis=1), own, 0.0)
        out[lo : lo + step] = f[:, counted] @ weight
    return out


def server_factor(view: PlacementView, tasks: np.ndarray) -> np.ndarray:
    """min over the servers job n uses of ``server_speed[n, s]`` (1 without server speeds or
    tasks): a synchronous job on several servers runs at its slowest server's pace."""
    if view.server_speed is None:
        return np.ones(view.n_jobs)
    f = np.where(tasks > 0, view.server_speed, np.inf).min(axis=1)
    return np.where(np.isfinite(f), f, 1.0)


def reward(view: PlacementView, tasks: np.ndarray) -> float:
    """Harmony's eq. (1): sum_n c_n / e_n with c_n = b_n * speed fraction."""
    return float(view.weight() @ speed_fractions(view, tasks))


def usage(view: PlacementView, xw: np.ndarray, xp: np.ndarray) -> np.ndarray:
    """[s, k] resources held by the tasks counted in xw, xp (earlier jobs not added)."""
    return xw.T @ view.worker_demand + xp.T @ view.ps_demand
