"""Least-priced schedule of one Hare job, given a price per GPU and tick.

The pricing problem of Hare_Sched's Dantzig-Wolfe reformulation (``models/hare_sched_dw.py``):
a column is one job's whole schedule -- every task of every round on a GPU with a start tick --
that obeys (4) arrival, (5) one GPU per task, (7) the round barrier and (8) on its own GPUs (two
tasks of the job on one GPU do not overlap in training). Its cost is w_n C_n plus the price of
the ticks its tasks train on. In integer ticks, with prefix sums P_g of the prices on GPU g:

    c_g(t)      = P_g[t + T^c_g] - P_g[t]                      a task training on g from t
    b_g^k(rho,x) = least price of k non-overlapping tasks on g starting in [rho, x]
                = min(b_g^k(rho, x-1), c_g(x) + b_g^{k-1}(rho, x - T^c_g))
    f(rho, e)   = min over k_1 + ... + k_G = |D_r| of sum_g b_g^{k_g}(rho, e - T^c_g - T^s_g)
                  (a round ready at rho whose every task has trained and synced by e)
    F_0(e)      = f(a_n, e);   F_r(e) = min_rho F_{r-1}(rho) + f(rho, e)   (7): round r is ready at rho

and the least priced column with C_n = e costs F_{R-1}(e) + w_n e. One pricing returns the best
columns for several completion times e at once (column generation converges in fewer rounds).
Tasks of a job share their times (Hare Sec. 5.1), so f is one table for all rounds; the rounds
differ only in their windows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.compiled import kernel

INF = 1e300


@kernel
def _gpu_tables(P, Tc, K, lo, W, ri, H, best):
    """best[g, k, x - lo] = b_g^k(lo + ri, x) for x in [lo + ri, lo + W)."""
    G = Tc.shape[0]
    for g in range(G):
        for k in range(K + 1):
            for xi in range(W):
                best[g, k, xi] = 0.0 if k == 0 else INF
        for xi in range(ri, W):
            x = lo + xi
            c = INF
            if x + Tc[g] <= H:
                c = P[g, x + Tc[g]] - P[g, x]
            for k in range(1, K + 1):
                keep = best[g, k, xi - 1] if xi > ri else INF
                if k == 1:
                    new = c
                else:
                    prev = xi - Tc[g]
                    new = c + best[g, k - 1, prev] if prev >= ri else INF
                best[g, k, xi] = keep if keep < new else new


@kernel
def round_table(P, Tc, cy, K, lo, hi, H, ready):
    """f[rho - lo, e - lo] for every ready tick rho with ``ready[rho - lo]`` and e in [rho, hi]."""
    G = Tc.shape[0]
    W = hi - lo + 1
    f = np.full((W, W), INF)
    best = np.empty((G, K + 1, W))
    comb = np.empty(K + 1)
    tmp = np.empty(K + 1)
    for ri in range(W):
        if not ready[ri]:
            continue
        _gpu_tables(P, Tc, K, lo, W, ri, H, best)
        for ei in range(ri, W):
            comb[0] = 0.0
            for k in range(1, K + 1):
                comb[k] = INF
            for g in range(G):
                xi = ei - cy[g]
                if xi < ri:
                    continue
                for k in range(K + 1):
                    tmp[k] = comb[k]
                for k in range(K):
                    if comb[k] < INF:
                        for j in range(1, K - k + 1):
                            v = comb[k] + best[g, j, xi]
                            if v < tmp[k + j]:
                                tmp[k + j] = v
                for k in range(K + 1):
                    comb[k] = tmp[k]
            f[ri, ei] = comb[K]
    return f


@kernel
def round_placement(P, Tc, cy, K, lo, hi, H, ri, ei):
    """The tasks (GPU, start tick) of a round ready at lo + ri, done by lo + ei, of least price f."""
    G = Tc.shape[0]
    W = hi - lo + 1
    best = np.empty((G, K + 1, W))
    _gpu_tables(P, Tc, K, lo, W, ri, H, best)
    # knapsack over GPUs with back pointers: take[g, k] = tasks put on GPU g when k are placed on 0..g
    comb = np.full((G + 1, K + 1), INF)
    take = np.zeros((G + 1, K + 1), dtype=np.int64)
    comb[0, 0] = 0.0
    for g in range(G):
        xi = ei - cy[g]
        for k in range(K + 1):
            comb[g + 1, k] = comb[g, k]
            take[g + 1, k] = 0
        if xi < ri:
            continue
        for k in range(K):
            if comb[g, k] < INF:
                for j in range(1, K - k + 1):
                    v = comb[g, k] + best[g, j, xi]
                    if v < comb[g + 1, k + j]:
                        comb[g + 1, k + j] = v
                        take[g + 1, k + j] = j
    out = np.empty((K, 2), dtype=np.int64)
    n_out = 0
    k = K
    for g in range(G - 1, -1, -1):
        j = take[g + 1, k]
        k -= j
        # walk b_g^j back from x = e - cy: the last task starts where the minimum was first reached
        x = ei - cy[g]
        while j > 0:
            while x > ri and best[g, j, x - 1] <= best[g, j, x]:
                x -= 1
            out[n_out, 0] = g
            out[n_out, 1] = lo + x
            n_out += 1
            x -= Tc[g]
            j -= 1
    return out[:n_out]


@dataclass(frozen=True)
class JobPricer:
    """One job's data in integer ticks and the windows every schedule within the bound obeys."""

    train: np.ndarray  # T^c per GPU (ticks, int64)
    cycle: np.ndarray  # T^c + T^s per GPU (ticks, int64)
    tasks_per_round: int
    rounds: int
    weight: float
    arrival: int
    ready_lo: np.ndarray  # per round: earliest barrier (round 0: the arrival)
    ready_hi: np.ndarray  # per round: latest barrier (latest start of its tasks)
    completion_hi: int  # C_n <= this
    horizon: int  # ticks 0..horizon-1 carry prices

    def price(
        self, P: np.ndarray, completion_lo: int = 0, completion_hi: int | None = None
    ) -> tuple[float, list[tuple[int, int, int]], int]:
        """(least price of a schedule, its tasks as (round, GPU, start tick), its C_n) for
        prefix sums ``P[g, t]`` of the tick prices (shape G x horizon+1), among the schedules
        with ``completion_lo <= C_n <= completion_hi`` (a branching decision)."""
        best = self.price_by_completion(P, completion_lo, completion_hi, 1)
        if not best:
            return INF, [], completion_lo
        return best[0]

    def price_by_completion(
        self,
        P: np.ndarray,
        completion_lo: int = 0,
        completion_hi: int | None = None,
        count: int = 1,
    ) -> list[tuple[float, list[tuple[int, int, int]], int]]:
        """The least priced schedules for up to ``count`` distinct completion times C_n, best
        first, as (price, tasks, C_n); [] when no schedule has C_n in [completion_lo, completion_hi].
        An entry's C_n is its schedule's completion, except that the schedule of C_n =
        completion_lo may end earlier (a branch's least column, charged w_n completion_lo: the
        price is then a lower bound on the branch's schedules, as the Lagrangian bound needs).

        Forward over the rounds: F_0(e) = f(a_n, e), F_r(e) = min_rho F_{r-1}(rho) + f(rho, e)
        over the barriers rho in round r's window; a schedule ending at e costs F_{R-1}(e) + w e.
        The first entry is the least priced column; the others are columns with other
        completion times that are free to get once the tables are built.
        """
        lo = int(self.ready_lo[0])
        hi = (
            int(self.completion_hi)
            if completion_hi is None
            else min(int(self.completion_hi), int(completion_hi))
        )
        if hi < lo or self.ready_hi[0] < lo:
            return []
        W = hi - lo + 1
        ready = np.zeros(W, dtype=np.bool_)
        for r in range(self.rounds):
            a, b = max(lo, int(self.ready_lo[r])), min(hi, int(self.ready_hi[r]))
            if a <= b:
                ready[a - lo : b - lo + 1] = True
        f = round_table(
            P, self.train, self.cycle, self.tasks_per_round, lo, hi, self.horizon, ready
        )
        ticks = np.arange(lo, hi + 1)
        F = f[0].copy()  # round 0 is ready at lo = a_n
        came_from = np.zeros((self.rounds, W), dtype=np.int64)
        for r in range(1, self.rounds):  # round r is ready at the previous round's end rho
            inside = (ticks >= self.ready_lo[r]) & (ticks <= self.ready_hi[r])
            M = np.where(inside, F, INF)[:, None] + f
            came_from[r] = np.argmin(M, axis=0)
            F = M[came_from[r], np.arange(W)]
        # F is "done by e", so the schedule behind F(e) ends exactly at e only where F drops at e;
        # elsewhere it ends earlier and is a dearer copy of an earlier one, except at the least
        # allowed e, whose schedule may end before completion_lo (then it is charged w e)
        first = max(lo, int(completion_lo))
        drops = F < np.concatenate(([INF], F[:-1])) - 1e-9 * np.maximum(1.0, np.abs(F))
        candidate = (ticks == first) | ((ticks > first) & drops)
        total = np.where(candidate & (F < INF / 2), F + self.weight * ticks.astype(float), INF)
        out = []
        for ei in np.argsort(total, kind="stable")[:count]:
            value = float(total[ei])
            if value >= INF / 2:
                break
            ends = [int(ei)]
            for r in range(self.rounds - 1, 0, -1):
                ends.append(int(came_from[r][ends[-1]]))
            ends.reverse()  # ends[r]: the tick (- lo) by which round r has trained and synced
            tasks: list[tuple[int, int, int]] = []
            ri = 0
            for r in range(self.rounds):
                for g, start in round_placement(
                    P,
                    self.train,
                    self.cycle,
                    self.tasks_per_round,
                    lo,
                    hi,
                    self.horizon,
                    ri,
                    ends[r],
                ):
                    tasks.append((r, int(g), int(start)))
                ri = ends[r]
            out.append((value, tasks, lo + int(ei)))
        return out
