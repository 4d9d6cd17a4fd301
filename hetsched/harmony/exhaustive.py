"""The exact placement optimum by enumeration: every combination of the new jobs' placements
(each job: wait, or any distribution of its tasks that fits), depth first with capacity pruning.
Independent of the MILP (``models/harmony_placement.py``): the tests require both to agree.
For small instances only; refuses above ``limit`` leaves."""

from __future__ import annotations

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.harmony.evaluate import reward
from hetsched.harmony.heuristics import _State, job_candidates, n_distributions
from hetsched.harmony.problem import Placement
from hetsched.harmony.view import PlacementView


def exhaustive_placement(view: PlacementView, limit: int = 2_000_000) -> tuple[Placement, float]:
    """(an optimal placement, its reward)."""
    new = [int(n) for n in np.flatnonzero(view.new)]
    size = 1
    for n in new:
        size *= n_distributions(view, n) + 1
    if size > limit:
        raise HetschedError(
            f"exhaustive placement: {size:,} combinations exceed the limit {limit:,}"
        )
    options = [
        [(np.zeros(view.n_servers, dtype=int),) * 2]
        + job_candidates(view, n, None, max_candidates=limit)
        for n in new
    ]
    fixed = view.fixed_workers + view.fixed_ps
    best: list = [-np.inf, None]
    xw = np.zeros((view.n_jobs, view.n_servers), dtype=int)
    xp = np.zeros_like(xw)
    free0 = view.capacity - _State(view).used

    def dfs(i: int, free: np.ndarray) -> None:
        if i == len(new):
            value = reward(view, fixed + xw + xp)
            if value > best[0] + 1e-12:
                best[0], best[1] = value, (xw.copy(), xp.copy())
            return
        n = new[i]
        for w, p in options[i]:
            need = np.outer(w, view.worker_demand[n]) + np.outer(p, view.ps_demand[n])
            if (need > free + 1e-9).any():
                continue
            xw[n], xp[n] = w, p
            dfs(i + 1, free - need)
        xw[n] = xp[n] = 0

    dfs(0, free0)
    return Placement.from_arrays(view, *best[1]), float(best[0])
