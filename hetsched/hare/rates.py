"""How fast a job's rounds can train on each GPU class: the rate region of Hare_Sched (6)-(8).

A round of job n that puts k_c of its |D_r| tasks on GPU class c (s_c GPUs with the same T^c_c,
T^s_c) lasts at least

    d(k) = max_{c: k_c > 0} ceil(k_c / s_c) T^c_c + T^s_c,

because some GPU of class c trains ceil(k_c / s_c) of them one after another ((8): a GPU trains
one task at a time) and the last then synchronizes before the barrier ((6), (7)). So over its
d(k) seconds or more the round trains the vector k: its *rate* is at most k / d(k) tasks per
second per class. The rate region of the job is

    Q_n = {x >= 0 : x <= y for some y in conv({0} u {k / d(k) : sum_c k_c = |D_r|})},

and any run of consecutive rounds of job n lasting A seconds trains a task vector in A Q_n
(each round lasts D_r >= d(k_r) and k_r = D_r (k_r / D_r) with k_r / D_r in Q_n).
:func:`rate_facets` writes Q_n as {x >= 0 : alpha . x <= 1 for each facet alpha >= 0}; qhull
(scipy's ConvexHull) finds the facets.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.spatial import ConvexHull, QhullError

#: at most this many points go to qhull for one job (configurations and their projections);
#: a job with more gets no facets (its rate cuts are left out, which keeps the bound valid)
MAX_POINTS = 20000


def round_configs(tasks: int, classes: int) -> np.ndarray:
    """Every k in N^classes with sum k = tasks (stars and bars), one row each."""
    rows = []
    for bars in itertools.combinations(range(tasks + classes - 1), classes - 1):
        edges = (-1, *bars, tasks + classes - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(classes)])
    return np.array(rows, dtype=np.int64)


def config_durations(
    configs: np.ndarray, sizes: np.ndarray, train: np.ndarray, sync: np.ndarray
) -> np.ndarray:
    """d(k) per configuration (module docstring): the least length of a round that splits its
    tasks as k over classes of ``sizes`` GPUs with times ``train``, ``sync``."""
    per_gpu = np.ceil(configs / sizes[None, :])
    length = np.where(configs > 0, per_gpu * train[None, :] + sync[None, :], 0.0)
    return length.max(axis=1)


def rate_points(
    tasks: int, sizes: np.ndarray, train: np.ndarray, sync: np.ndarray
) -> np.ndarray | None:
    """k / d(k) of the Pareto-maximal configurations (None: too many to enumerate)."""
    sizes = np.asarray(sizes, dtype=float)
    count = 1
    for i in range(1, len(sizes)):  # C(tasks + classes - 1, classes - 1) configurations
        count = count * (tasks + i) // i
    if count > MAX_POINTS:
        return None
    configs = round_configs(tasks, len(sizes))
    rates = configs / config_durations(configs, sizes, np.asarray(train), np.asarray(sync))[:, None]
    keep = [
        i
        for i, r in enumerate(rates)
        if not np.any(np.all(rates >= r, axis=1) & np.any(rates > r, axis=1))
    ]
    return rates[keep]


def rate_facets(
    tasks: int, sizes: np.ndarray, train: np.ndarray, sync: np.ndarray
) -> np.ndarray | None:
    """The facets alpha >= 0 of Q_n, alpha . x <= 1 (one row each), rescaled so that every rate
    point meets them exactly (alpha . r <= 1 to rounding); None when Q_n is too large to
    enumerate (:data:`MAX_POINTS`)."""
    points = rate_points(tasks, sizes, train, sync)
    classes = len(sizes)
    if points is None or len(points) * 2**classes > MAX_POINTS:
        return None
    if classes == 1:
        return np.array([[1.0 / float(points[:, 0].max())]])
    masks = np.array(list(itertools.product((0.0, 1.0), repeat=classes)))
    cloud = np.unique((points[:, None, :] * masks[None, :, :]).reshape(-1, classes), axis=0)
    try:
        hull = ConvexHull(cloud)
    except QhullError:  # a flat cloud (no full-dimensional hull): leave the job's cuts out
        return None
    out = []
    for *normal, offset in hull.equations:  # normal . x + offset <= 0 inside
        alpha = np.maximum(np.asarray(normal), 0.0)
        if offset < -1e-12 and alpha.max() > 0:
            alpha = alpha / float((points @ alpha).max())  # exact: max over the points is 1
            out.append(alpha)
    _, first = np.unique(np.round(np.array(out), 12), axis=0, return_index=True)
    return np.array(out)[np.sort(first)]
