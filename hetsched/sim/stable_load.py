"""The arrival rate at which ``gavel-poisson``'s job mix loads its cluster to a given utilization.

The mix (:func:`hetsched.sim.workloads.gavel_poisson`): scale factor s with Philly's split p_s,
the model uniform among those Gavel measured at s on every type, the duration on a V100
log-uniform on [D0, D1] (mean E[d] = (D1 - D0) / ln(D1 / D0)). A job of class c = (s, model)
holds s GPUs for d X_v100(c) / X_r(c) seconds on type r: rho_{c,r} = X_v100(c) / X_r(c) GPU
seconds per V100 second, times s. The cluster's fluid capacity for this mix is the largest
arrival rate lambda (jobs per second) at which the arrivals of each class can be split over the
types (z_{c,r}: rate of class-c jobs served on type r) without any type needing more GPU-seconds
per second than it has GPUs:

    max lambda  s.t.  sum_r z_{c,r} = lambda p_c                       (every class served)
                      sum_c z_{c,r} s_c E[d] rho_{c,r} <= N_r          (capacity of type r)
                      z >= 0

A rate U lambda* loads the cluster to U: for U < 1 a static allocation serves every arrival
(the backlog stays bounded in the fluid limit), for U >= 1 none does. The default
``gavel-poisson`` (20 jobs/h on 3 x 20 GPUs) is several times over capacity; ``gavel-poisson:U``
is the same mix at load U.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from hetsched.core.errors import HetschedError


def saturation_rate(
    classes: list[tuple[float, int, dict[str, float]]],
    gpus_per_type: dict[str, int],
    mean_v100_seconds: float,
) -> float:
    """lambda* (jobs per second) of the LP above: ``classes`` are (probability p_c, scale s_c,
    throughput per type X_r(c), with a ``v100`` entry); ``gpus_per_type`` the N_r."""
    types = sorted(gpus_per_type)
    n_c, n_r = len(classes), len(types)
    # variables: z_{c,r} (row-major), then lambda; maximize lambda
    cost = np.zeros(n_c * n_r + 1)
    cost[-1] = -1.0
    a_eq = np.zeros((n_c, n_c * n_r + 1))
    a_ub = np.zeros((n_r, n_c * n_r + 1))
    bounds = []
    for c, (p, scale, thr) in enumerate(classes):
        a_eq[c, c * n_r : (c + 1) * n_r] = 1.0
        a_eq[c, -1] = -p
        for r, t in enumerate(types):
            x = thr.get(t, 0.0)
            if x > 0:
                a_ub[r, c * n_r + r] = scale * mean_v100_seconds * thr["v100"] / x
            bounds.append((0.0, None if x > 0 else 0.0))
    bounds.append((0.0, None))
    res = linprog(
        cost,
        A_ub=a_ub,
        b_ub=[float(gpus_per_type[t]) for t in types],
        A_eq=a_eq,
        b_eq=np.zeros(n_c),
        bounds=bounds,
        method="highs",
    )
    if res.status != 0 or not res.x[-1] > 0:
        raise HetschedError(f"the fluid capacity LP failed: {res.message}")
    return float(res.x[-1])


def mean_log_uniform(low: float, high: float) -> float:
    """E[d] for d log-uniform on [low, high]."""
    return (high - low) / math.log(high / low)
