"""A lower bound on one Hare job's least priced schedule when GPU time is priced per GPU class
and time bucket, by dynamic programming over (round, tick): the pricing of the bucketed
job-schedule master (``models/hare_sched_buckets.py``).

The prices are pi[c, b] per GPU-tick of class c (GPUs with the same times for every job) in
bucket b = [b B, (b + 1) B); w_c(t) is the price of one task of class c training T^c_c ticks
from t. A round that puts k_c tasks on class c (m_c GPUs) lasts at least
d(k) = max_{c: k_c > 0} ceil(k_c / m_c) T^c_c + T^s_c from its first task's start x to its end
e (Hare (5), (7), (8) among the job's own tasks: some GPU of c trains ceil(k_c / m_c) of them
one after another). A GPU holding d tasks of the round trains them in order within
[x, e - T^s_c), its l-th starting in [x + (l - 1) T^c_c, e - T^s_c - (d - l + 1) T^c_c], so it
costs at least s_c(d) = sum_l min w_c over that range (the exact price for d = 1); over the
lower convex hull of s_c, k_c tasks cost least spread evenly over the class's GPUs, and the
cheapest K = sum_c k_c are taken one at a time. That is cost_D(x, e), for each distinct
duration D (a value of d; the k with d(k) <= D). With F_r(e) the least price of rounds 0..r
done by e (non-increasing in e),

    F_r(e) = min(F_r(e - 1), min_D min_{x <= e - D} F_{r-1}(x) + cost_D(x, e)).

The minimum over x is taken in groups: x = e - D itself, then groups of 1, 2, 4, ... starts
before it (:data:`GROUPS` of them), each charged at its earliest start (the widest window, the
least price) and read off F_{r-1} at its latest (the least F), and one group for all earlier
starts. Every real schedule of the job maps to a path no dearer, so min_e F_{R-1}(e) + w e is
at most the job's least priced schedule: the Lagrangian bound stays valid. Each path is also
a real schedule (each round from its group's latest start, each GPU's tasks from its least
priced tick), which the master prices exactly. Round prices are worked out when a path first
needs them and kept for the later rounds; a transition whose F_{r-1} already reaches the best
value found is skipped. Cost: O(R W |durations| GROUPS) per job at most, W its window in
ticks, against the O(R W^2) of the per-tick DP of :mod:`hetsched.hare.pricing`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hetsched.core.compiled import kernel

INF = 1e300
#: a round's first start is charged in groups of 1, 1, 2, 4, ... starts before the latest it
#: may have (``_group_start``): exact to within a factor 2 of its slack up to 2^GROUPS ticks,
#: and every earlier start shares one lower bound
GROUPS = 6


@kernel
def task_prices(pi, T, B, lo, hi):
    """w[c, t - lo]: the price of one task of class c training T_c ticks from tick t, for t in
    [lo, hi] (INF where it would pass hi), and its sparse table of range minima."""
    C = T.shape[0]
    W = hi - lo + 1
    P = np.zeros((C, W + 1))
    for c in range(C):
        for ti in range(W):
            P[c, ti + 1] = P[c, ti] + pi[c, (lo + ti) // B]
    levels = 1
    while (1 << levels) <= W:
        levels += 1
    st = np.full((levels, C, W), INF)
    for c in range(C):
        for ti in range(W):
            if ti + T[c] <= W:
                st[0, c, ti] = P[c, ti + T[c]] - P[c, ti]
    for k in range(1, levels):
        h = 1 << (k - 1)
        for c in range(C):
            for ti in range(W - (1 << k) + 1):
                st[k, c, ti] = min(st[k - 1, c, ti], st[k - 1, c, ti + h])
    return st


@kernel
def _range_min(st, c, a, b):
    k = 0
    while (1 << (k + 1)) <= b - a + 1:
        k += 1
    return min(st[k, c, a], st[k, c, b - (1 << k) + 1])


@kernel
def _fill(st, m, T, S, cap, K, xs, e, counts, s, hull):
    """A lower bound on the price of a round whose first task starts at or after xs and which
    ends by e (ticks relative to the window), with k_c <= cap_c tasks on class c and sum k_c =
    K; the counts k into ``counts`` (``s``, ``hull``: scratch space).

    A GPU of class c holding d of the tasks trains them one after another within [xs, e - S_c),
    so its l-th starts in [xs + (l - 1) T_c, e - S_c - (d - l + 1) T_c]: it costs at least
    s_c(d) = sum_l (the least priced task start in that range). Over the lower convex hull of
    s_c, k tasks cost least spread evenly over the class's m_c GPUs, and the least sum over the
    classes takes the cheapest next task K times."""
    C = cap.shape[0]
    for c in range(C):
        counts[c] = 0
        s[c, 0] = 0.0
        depth = (cap[c] + m[c] - 1) // m[c]
        for d in range(1, depth + 1):
            total = 0.0
            for lv in range(d):
                a, b = xs + lv * T[c], e - S[c] - (d - lv) * T[c]
                if b < a:
                    total = INF
                    break
                total += _range_min(st, c, a, b)
            s[c, d] = total
        # s_c on its lower convex hull over 0..depth (each point only lowered: still a bound)
        top = 0
        while top < depth and s[c, top + 1] < INF:
            top += 1
        n = 0
        for d in range(top + 1):
            while n >= 2 and (s[c, hull[n - 1]] - s[c, hull[n - 2]]) * (d - hull[n - 1]) >= (
                s[c, d] - s[c, hull[n - 1]]
            ) * (hull[n - 1] - hull[n - 2]):
                n -= 1
            hull[n] = d
            n += 1
        for k in range(n - 1):
            d0, d1 = hull[k], hull[k + 1]
            for d in range(d0 + 1, d1):
                s[c, d] = s[c, d0] + (s[c, d1] - s[c, d0]) * (d - d0) / (d1 - d0)
    total = 0.0
    for _ in range(K):
        best, pick = INF, -1
        for c in range(C):
            k = counts[c]
            if k >= cap[c]:
                continue
            d = k // m[c]  # the next task goes on a GPU holding d: its stack grows to d + 1
            marginal = s[c, d + 1] - s[c, d]
            if marginal < best:
                best, pick = marginal, c
        if pick < 0 or best >= INF / 2:
            return INF
        counts[pick] += 1
        total += best
    return total


def scratch(caps: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, ...]:
    """The scratch space of :func:`_fill`: (counts, s, hull)."""
    depth = int(((caps + m - 1) // m).max())
    C = len(m)
    return np.empty(C, dtype=np.int64), np.empty((C, depth + 2)), np.empty(depth + 2, np.int64)


@kernel
def _group_start(i, x0, L):
    """(earliest, latest) first start of window group i before x0: i = 0 is x0 itself, group
    i in 1..L the 2^(i-1) starts x0 - 2^i + 1 .. x0 - 2^(i-1), and L + 1 every earlier one; a
    round charged at its group's earliest start and read off F at its latest costs at most a
    real one whose first start lies in the group. latest < 0: empty."""
    if i == 0:
        return x0, x0
    if i <= L:
        return max(0, x0 - (1 << i) + 1), x0 - (1 << (i - 1))
    return 0, x0 - (1 << L)


@kernel
def forward(st, m, T, S, caps, D, K, W, L, counts, s, hull, R, ready_lo, ready_hi):
    """F_{R-1} over the window's ticks and each (round, e)'s choice: -1 (done by e - 1 already)
    or j * (L + 2) + i, the duration class j of the round and the window group i of its first
    start (:func:`_group_start`). Round r's first start lies in [ready_lo[r], ready_hi[r]] (ticks
    relative to the window), so F_r is needed from ready_lo[r] + min D to ready_hi[r + 1] only.

    A round's price (:func:`_fill`) is worked out when a path first reaches it and kept for
    the later rounds; none is needed where F_{r-1} at its start already reaches the best value
    found for e (F is non-increasing and prices are >= 0, and starts move earlier with j, i)."""
    J = caps.shape[0]
    memo = np.full((J, L + 2, W), -1.0)
    prev = np.zeros(W)  # F_{-1}: round 0 is ready at the arrival (tick 0 of the window)
    cur = np.full(W, INF)
    choice = np.full((R, W), -1, dtype=np.int16)
    for r in range(R):
        first = max(0, ready_lo[r] + D[0])
        last = W - 1 if r == R - 1 else min(W - 1, ready_hi[r + 1])
        for ei in range(first):
            cur[ei] = INF
        for ei in range(first, last + 1):
            best = cur[ei - 1] if ei > first else INF
            code = -1
            for j in range(J):
                x0 = ei - D[j]
                if x0 < ready_lo[r] or prev[min(x0, ready_hi[r])] >= best:
                    break  # D increases with j: every later j starts earlier
                for i in range(L + 2):
                    xs, xe = _group_start(i, x0, L)
                    x = min(xe, ready_hi[r])
                    if x < ready_lo[r] or prev[x] >= best:
                        break
                    c = memo[j, i, ei]
                    if c < 0:
                        c = _fill(st, m, T, S, caps[j], K, xs, ei, counts, s, hull)
                        memo[j, i, ei] = c
                    v = prev[x] + c
                    if v < best:
                        best = v
                        code = j * (L + 2) + i
            cur[ei] = best
            choice[r, ei] = code
        for ei in range(last + 1, W):
            cur[ei] = cur[last]
        for ei in range(W):
            prev[ei] = cur[ei]
    return prev, choice


@dataclass(frozen=True)
class BucketPricer:
    """One job in integer ticks, its GPU classes and the windows every schedule within the
    bound obeys (:meth:`HareView.start_windows`)."""

    train: np.ndarray  # T^c per class (ticks)
    sync: np.ndarray  # T^s per class (ticks)
    class_gpus: tuple[np.ndarray, ...]  # the GPUs (indices) of each class
    tasks_per_round: int
    rounds: int
    weight: float
    arrival: int
    ready_lo: np.ndarray  # per round: earliest start of its tasks
    ready_hi: np.ndarray  # per round: latest start of its tasks
    completion_hi: int
    tail: np.ndarray  # per round: least time from its start to C_n (its cycle, later rounds)
    bucket: int  # B, ticks per bucket

    @property
    def durations(self) -> tuple[np.ndarray, np.ndarray]:
        """(D, caps): the distinct round durations d(k) in increasing order, and per duration the
        most tasks each class can hold within it."""
        K = self.tasks_per_round
        size = np.array([len(g) for g in self.class_gpus])
        values = sorted(
            {
                int(q * self.train[c] + self.sync[c])
                for c in range(len(size))
                for q in range(1, -(-K // size[c]) + 1)
            }
        )
        D, caps = [], []
        for d in values:
            stack = np.maximum(0, (d - self.sync) // np.maximum(self.train, 1))
            cap = np.minimum(K, size * stack).astype(np.int64)
            if cap.sum() >= K:
                D.append(d)
                caps.append(cap)
        return np.array(D, dtype=np.int64), np.array(caps, dtype=np.int64)

    def price_by_completion(
        self, pi: np.ndarray, count: int = 1
    ) -> tuple[list[tuple[float, list[tuple[int, int, int]], int]], np.ndarray]:
        """Up to ``count`` (lower bound, tasks as (round, GPU, start tick), C_n) for distinct
        completion times, least first, at class-bucket prices ``pi`` (C x buckets): the first
        value is at most the job's least priced schedule; each schedule is a real one of the job
        (its exact price is at least the value). Beside them, for each e from the arrival to the
        completion bound, a lower bound on the price of every schedule with C_n = e."""
        D, caps = self.durations
        lo, hi = int(self.arrival), int(self.completion_hi)
        # tick hi (and any past the master's last bucket) holds no training: price 0 there
        pi = np.pad(pi, ((0, 0), (0, max(0, hi // self.bucket + 1 - pi.shape[1]))))
        W = hi - lo + 1
        L = GROUPS
        Y = (self.train + self.sync).astype(np.int64)
        st = task_prices(pi, self.train.astype(np.int64), self.bucket, lo, hi)
        m = np.array([len(g) for g in self.class_gpus], dtype=np.int64)
        T, S = self.train.astype(np.int64), self.sync.astype(np.int64)
        args = (m, T, S)
        buffers = scratch(caps, m)
        ready_lo = np.maximum(0, np.asarray(self.ready_lo) - lo)
        ready_hi = np.asarray(self.ready_hi) - lo
        K = self.tasks_per_round
        F, choice = forward(st, *args, caps, D, K, W, L, *buffers, self.rounds, ready_lo, ready_hi)
        drops = F < np.concatenate(([INF], F[:-1])) - 1e-9 * np.maximum(1.0, np.abs(F))
        curve = np.where(F < INF / 2, F + self.weight * np.arange(lo, hi + 1), INF)
        total = np.where(drops, curve, INF)
        out = []
        for ei in np.argsort(total, kind="stable")[:count]:
            if total[ei] >= INF / 2:
                break
            tasks = self._path(choice, D, caps, Y, st, pi, args, buffers, int(ei))
            last = self.rounds - 1
            completion = lo + max(t + int(Y[c]) for r, g, t, c in tasks if r == last)
            out.append((float(total[ei]), [(r, g, lo + t) for r, g, t, _ in tasks], completion))
        return out, curve

    def narrowed(self, completion_hi: int) -> BucketPricer:
        """The same job with C_n <= ``completion_hi`` (e.g. by reduced costs), its rounds' latest
        starts narrowed to match (:meth:`HareView.start_windows`'s rule)."""
        hi = min(int(self.completion_hi), int(completion_hi))
        ready_hi = np.minimum(self.ready_hi, np.floor(hi - self.tail + 1e-6).astype(np.int64))
        return replace(self, completion_hi=hi, ready_hi=ready_hi)

    def _path(
        self, choice, D, caps, Y, st, pi, args, buffers, ei
    ) -> list[tuple[int, int, int, int]]:
        """The schedule behind F_{R-1}(lo + ei), ticks relative to lo, as (round, GPU, start,
        class): each round starts at the latest first start of its window group and has the
        class counts the DP charged; each GPU's stack of tasks starts at its least priced tick."""
        L = GROUPS
        counts = buffers[0]
        lo = int(self.arrival)
        ticks = np.arange(lo, lo + st.shape[2]) // self.bucket
        prefix = np.concatenate(
            (np.zeros((len(counts), 1)), np.cumsum(pi[:, ticks], axis=1)), axis=1
        )
        tasks = []
        for r in range(self.rounds - 1, -1, -1):
            while choice[r, ei] < 0:
                ei -= 1
            j, i = divmod(int(choice[r, ei]), L + 2)
            xs, xe = _group_start(i, ei - int(D[j]), L)
            _fill(st, *args, caps[j], self.tasks_per_round, xs, ei, *buffers)
            x = min(xe, int(self.ready_hi[r]) - lo)
            for c, gpus in enumerate(self.class_gpus):
                m, T = len(gpus), int(self.train[c])
                for g in range(min(m, int(counts[c]))):  # GPU g of the class: its stack of tasks
                    depth = (int(counts[c]) - g + m - 1) // m
                    first = _stack_start(prefix[c], x, ei - int(Y[c]) - (depth - 1) * T, depth * T)
                    for k in range(depth):
                        tasks.append((r, int(gpus[g]), first + k * T, c))
            ei = x
        return tasks


def _stack_start(prefix: np.ndarray, a: int, b: int, length: int) -> int:
    """The start t in [a, b] of the least priced ``length`` ticks (prefix sums ``prefix``)."""
    t = np.arange(a, max(a, b) + 1)
    return int(t[np.argmin(prefix[t + length] - prefix[t])])
