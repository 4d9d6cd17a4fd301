"""The pricing problem: one GPU's least reduced-cost schedule (van den Akker et al. 1999, Sec. 3).

A column is the sequence of jobs one GPU of class k runs, in Smith's order without idle time
(:mod:`.data`). With duals pi_j of the cover rows, the DP over the jobs in that order and the
tick t at which the GPU's last job so far ends is

    F_0(0) = 0,  F_0(t > 0) = inf
    F_i(t) = min(F_{i-1}(t),  F_{i-1}(t - p_{j_i}) + w_{j_i} (a + t + s_{j_i}) - pi_{j_i})

and the column ending at t has reduced cost F_n(t) - sigma_k. Branching narrows each job's end
tick to [lo_j, hi_j] and its classes; the DP takes job j at t only inside them, so it prices
exactly the columns a node allows. Phase one (Farkas pricing, when a node's master is
infeasible) uses the same DP with every cost set to zero (``weight = 0``).
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel

INF = 1e300


@kernel
def _dp(order, p, w, const, pi, lo, hi, allowed, horizon, weight, F, take):
    """Fill F (horizon + 1) and take (n, horizon + 1); take[i, t]: job order[i] ends at t."""
    F[:] = INF
    F[0] = 0.0
    for i in range(order.shape[0]):
        j = order[i]
        for t in range(horizon + 1):
            take[i, t] = False
        if not allowed[j]:
            continue
        pj = p[j]
        first = max(pj, lo[j])
        last = min(horizon, hi[j])
        wj = weight * w[j]
        cj = weight * const[j] - pi[j]
        for t in range(last, first - 1, -1):  # descending: F[t - pj] is still F_{i-1}
            prev = F[t - pj]
            if prev < INF:
                v = prev + wj * t + cj
                if v < F[t]:
                    F[t] = v
                    take[i, t] = True


@kernel
def _trace(order, p, take, end):
    """The jobs (in order) and end ticks of the column that ends at ``end``."""
    jobs = np.empty(order.shape[0], dtype=np.int64)
    ends = np.empty(order.shape[0], dtype=np.int64)
    c = 0
    t = end
    for i in range(order.shape[0] - 1, -1, -1):
        if t > 0 and take[i, t]:
            j = order[i]
            jobs[c] = j
            ends[c] = t
            c += 1
            t -= p[j]
    return jobs[:c][::-1].copy(), ends[:c][::-1].copy()


class ClassPricer:
    """Prices the columns of one GPU class; the tables are allocated once."""

    def __init__(
        self, order: np.ndarray, p: np.ndarray, w: np.ndarray, const: np.ndarray, horizon: int
    ):
        self.order, self.p, self.w, self.const = order, p, w, const
        self.horizon = int(horizon)
        self.F = np.empty(self.horizon + 1)
        self.take = np.empty((len(order), self.horizon + 1), dtype=np.bool_)

    def price(
        self,
        pi: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        allowed: np.ndarray,
        weight: float = 1.0,
        most: int = 1,
        below: float = 0.0,
    ) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
        """(min_t F_n(t), columns): up to ``most`` columns, one per end tick, of value below
        ``below`` (least first), each as (jobs, end ticks). The empty column has value 0."""
        _dp(
            self.order,
            self.p,
            self.w,
            self.const,
            pi,
            lo,
            hi,
            allowed,
            self.horizon,
            float(weight),
            self.F,
            self.take,
        )
        best = float(self.F.min())
        if most <= 0 or best >= below:
            return best, []
        cand = np.flatnonzero(self.F < below)
        cand = cand[np.argsort(self.F[cand], kind="stable")][:most]
        return best, [_trace(self.order, self.p, self.take, int(t)) for t in cand if t > 0]
