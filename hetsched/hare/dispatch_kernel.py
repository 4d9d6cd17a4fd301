"""The compiled depth-first branch and bound of :mod:`hetsched.hare.dispatch_search`.

Integer ticks throughout. A node is a partial schedule: the tasks dispatched so far, each at its
earliest start on its GPU (``max(barrier, GPU free)``), in non-decreasing (start, job) order; a
child dispatches one more task. The bound and the dominance rule are in the module doc of
:mod:`hetsched.hare.dispatch_search`; this file holds only the arithmetic.
"""

from __future__ import annotations

import math
import time

import numba as nb
import numpy as np

from hetsched.core.compiled import kernel
from hetsched.core.deadline import signal_pending

#: how many nodes pass between two looks at the clock
CLOCK_EVERY = 1 << 16
BIG = 1 << 62


@kernel
def _poll(deadline, shared, part, parts):
    """A look at the clock, at a held-back signal and at the other parts (in object mode, so that
    the other threads' writes are read from memory): (stop, the least objective
    another part has found). ``shared[p]``: part p's best; ``shared[parts]`` = 1: stop."""
    with nb.objmode(stop="boolean", other="int64"):
        # a signal's exception held back until the search returns (core.deadline) stops it too
        stop = bool(time.perf_counter() > deadline or shared[parts] != 0 or signal_pending())
        others = [int(shared[p]) for p in range(parts) if p != part]
        other = min(others) if others else BIG
    return stop, other


@kernel
def job_alone(n, s_last, f, bar, end, r, k, Tc, Ts, R, K, cnt):
    """The earliest completion of job n alone from this node: every later task starts at or
    after ``s_last``, its round's barrier and its GPU's free time; a round of q tasks ends at the
    q-th smallest of {start_m + j Tc[n, m] + Ts[n, m] : j >= 1} over the GPUs m."""
    M = f.shape[0]
    start = max(bar[n], s_last)
    e = end[n]
    first = True
    rr = r[n]
    while rr < R[n]:
        q = K[n] - (k[n] if first else 0)
        for m in range(M):
            cnt[m] = 0
        last = e if first else 0
        for _ in range(q):
            bm = 0
            bv = BIG
            for m in range(M):
                a = f[m] if f[m] > start else start
                val = a + (cnt[m] + 1) * Tc[n, m] + Ts[n, m]
                if val < bv:
                    bv = val
                    bm = m
            cnt[bm] += 1
            if bv > last:
                last = bv
        e = last
        start = e
        rr += 1
        first = False
    return e


@kernel
def _fluid_end(work, free, spd):
    """The least T with sum_m spd_m (T - free_m)^+ >= work (``free`` ascending)."""
    rate = 0.0
    done = 0.0  # sum over the GPUs in use of spd_m free_m
    M = free.shape[0]
    for i in range(M):
        rate += spd[i]
        done += spd[i] * free[i]
        end = (work + done) / rate
        if i == M - 1 or end <= free[i + 1]:
            return end
    return free[M - 1]


@kernel
def node_bound(s_last, f, bar, end, r, k, closed, Tc, Ts, w, R, K, pmin, speed, best, work):
    """A lower bound on the objective of every completion of this node (the larger of two):
    sum of w_n x (job n alone), and a min over completion orders of the open jobs (a subset DP)
    of sum w_n max(job n alone, when the work of the jobs done by then is done on the GPUs as a
    fluid of speeds ``speed``, each GPU from when it is free). Past 14 open jobs only the first."""
    lb1, opn, cnt, P, F = work
    N = w.shape[0]
    M = f.shape[0]
    tot = closed
    q = 0
    for n in range(N):
        if r[n] < R[n]:
            lb1[q] = job_alone(n, s_last, f, bar, end, r, k, Tc, Ts, R, K, cnt)
            opn[q] = n
            q += 1
    simple = float(tot)
    for j in range(q):
        simple += float(w[opn[j]] * lb1[j])
    if q <= 1 or q > 14 or math.ceil(simple - 1e-7 * max(1.0, simple)) >= best:
        return simple
    # the GPUs by the time they are free (at or after the last start), with their speeds: the
    # fluid does work P by the T with sum_m speed_m (T - free_m)^+ = P
    t0 = max(s_last, 0)
    free = np.empty(M, np.float64)
    spd = np.empty(M, np.float64)
    for m in range(M):
        free[m] = float(f[m] if f[m] > t0 else t0)
        spd[m] = speed[m]
    for i in range(1, M):
        j = i
        while j > 0 and free[j - 1] > free[j]:
            free[j - 1], free[j] = free[j], free[j - 1]
            spd[j - 1], spd[j] = spd[j], spd[j - 1]
            j -= 1
    F[0] = 0.0
    P[0] = 0.0
    full = (1 << q) - 1
    for S in range(1, full + 1):
        low = 0
        while not (S >> low) & 1:
            low += 1
        n = opn[low]
        P[S] = P[S & (S - 1)] + pmin[n] * ((R[n] - r[n]) * K[n] - k[n])
        fluid = _fluid_end(P[S], free, spd)
        least = 1e300
        rest = S
        j = 0
        while rest:
            if rest & 1:
                c = lb1[j] if lb1[j] > fluid else fluid
                val = F[S ^ (1 << j)] + w[opn[j]] * c
                if val < least:
                    least = val
            rest >>= 1
            j += 1
        F[S] = least
    dp = tot + F[full]
    return dp if dp > simple else simple


@kernel(nogil=True)  # the progress line on stderr goes on while it runs
def search(
    Tc,
    Ts,
    w,
    arrival,
    R,
    K,
    gpu_class,
    pmin,
    speed,
    ub,
    deadline,
    n_buckets,
    slots,
    split,
    part,
    parts,
    shared,
):
    """Depth-first search for a schedule of objective < ``ub`` (integer ticks x weights).
    Returns (best, found, starts and GPUs per dispatch step, job per step, nodes, finished,
    dominated, root bound); ``finished`` means every node was searched or pruned (a proof).

    Part ``part`` of ``parts`` (threads searching one tree): above depth ``split`` every part
    expands the same nodes (pruned only against ``ub``, so that they all number the nodes at
    depth ``split`` alike), and part p searches the subtrees of the nodes numbered p, p + parts,
    ... there. Each part prunes against its own best and against a strictly better one of
    another part (``shared``, read every CLOCK_EVERY nodes), so what it finds does not depend on
    the threads' timing when its best is the optimum. One part: ``split`` 0."""
    N, M = Tc.shape
    D = 0
    for n in range(N):
        D += R[n] * K[n]
    q_max = N if N <= 14 else 1
    work = (
        np.zeros(N, np.int64),
        np.zeros(N, np.int64),
        np.zeros(M, np.int64),
        np.zeros(1 << q_max, np.float64),
        np.zeros(1 << q_max, np.float64),
    )
    f = np.zeros(M, np.int64)
    r = np.zeros(N, np.int64)
    k = np.zeros(N, np.int64)
    bar = arrival.copy()
    end = np.zeros(N, np.int64)
    C = np.zeros(N, np.int64)
    cand_n = np.zeros((D + 1, N * M), np.int64)
    cand_m = np.zeros((D + 1, N * M), np.int64)
    cand_s = np.zeros((D + 1, N * M), np.int64)
    sort_key = np.zeros(N * M, np.int64)
    count = np.zeros(D + 1, np.int64)
    ptr = np.zeros(D + 1, np.int64)
    undo = np.zeros((D + 1, 6), np.int64)  # f[m], end[n], k[n], r[n], bar[n], C[n]
    move_n = np.zeros(D + 1, np.int64)
    move_m = np.zeros(D + 1, np.int64)
    move_s = np.zeros(D + 1, np.int64)
    best = ub
    best_n = np.zeros(D, np.int64)
    best_m = np.zeros(D, np.int64)
    best_s = np.zeros(D, np.int64)
    found = False
    # dominance memo: the dispatched counts per job (mixed radix) -> a bucket of visited states
    radix = np.zeros(N, np.int64)
    mul = 1
    for n in range(N):
        radix[n] = mul
        mul = mul * (R[n] * K[n] + 1) if mul < BIG // (R[n] * K[n] + 1) else BIG
    table = dict()
    table[np.int64(-1)] = np.int64(-1)
    used = 0
    SW = M + 2 * N + 4
    store = np.zeros((n_buckets, slots, SW), np.int64)
    fill = np.zeros(n_buckets, np.int64)
    cur = np.zeros(SW, np.int64)
    key = np.int64(0)
    closed = np.int64(0)
    sum_starts = np.int64(0)
    nodes = 0
    dominated_nodes = 0
    root_bound = 0.0
    d = 0
    s_last = np.int64(-1)
    n_last = np.int64(-1)
    entering = True
    finished = True
    other = BIG  # the least objective another part has found (as of the last poll)
    frontier = 0  # nodes met at depth ``split``
    while True:
        if entering:
            entering = False
            nodes += 1
            count[d] = 0
            ptr[d] = 0
            if nodes % CLOCK_EVERY == 0:
                stop, other = _poll(deadline, shared, part, parts)
                if stop:
                    finished = False
                    break
            mine = True
            if d == split:
                mine = frontier % parts == part
                frontier += 1
            limit = best if best <= other else other + 1  # prune at bound >= limit
            if d == D:
                if closed < best:
                    best = closed
                    shared[part] = best
                    found = True
                    for t in range(D):
                        best_n[t] = move_n[t]
                        best_m[t] = move_m[t]
                        best_s[t] = move_s[t]
            elif not mine:
                pass
            elif d >= split and _dominated(
                f,
                bar,
                end,
                r,
                R,
                gpu_class,
                closed,
                s_last,
                n_last,
                sum_starts,
                key,
                table,
                store,
                fill,
                cur,
                slots,
            ):
                dominated_nodes += 1
            else:
                if d >= split:  # above it every part expands the same nodes: no memo there
                    if key not in table and used < n_buckets:
                        table[key] = used
                        used += 1
                    if key in table:
                        b = table[key]
                        slot = fill[b] % slots
                        fill[b] += 1
                        store[b, slot, :] = cur
                else:
                    limit = ub  # the same in every part, so that they number the nodes alike
                bound = node_bound(
                    s_last, f, bar, end, r, k, closed, Tc, Ts, w, R, K, pmin, speed, limit, work
                )
                if d == 0:
                    root_bound = bound
                if math.ceil(bound - 1e-7 * max(1.0, bound)) < limit:
                    count[d] = _children(
                        d,
                        f,
                        bar,
                        r,
                        R,
                        Tc,
                        gpu_class,
                        s_last,
                        n_last,
                        cand_n,
                        cand_m,
                        cand_s,
                        sort_key,
                    )
        if ptr[d] < count[d]:  # the next child
            i = ptr[d]
            ptr[d] += 1
            n = cand_n[d, i]
            m = cand_m[d, i]
            s = cand_s[d, i]
            undo[d, 0] = f[m]
            undo[d, 1] = end[n]
            undo[d, 2] = k[n]
            undo[d, 3] = r[n]
            undo[d, 4] = bar[n]
            undo[d, 5] = C[n]
            move_n[d] = n
            move_m[d] = m
            move_s[d] = s
            key += radix[n]
            sum_starts += s
            f[m] = s + Tc[n, m]
            fin = s + Tc[n, m] + Ts[n, m]
            if fin > end[n]:
                end[n] = fin
            k[n] += 1
            if k[n] == K[n]:  # the round is complete: its end is the next round's barrier
                bar[n] = end[n]
                r[n] += 1
                k[n] = 0
                if r[n] == R[n]:
                    C[n] = end[n]
                    closed += w[n] * C[n]
                end[n] = 0
            d += 1
            s_last = s
            n_last = n
            entering = True
        else:  # back to the parent
            if d == 0:
                break
            d -= 1
            n = move_n[d]
            m = move_m[d]
            key -= radix[n]
            sum_starts -= move_s[d]
            if r[n] == R[n]:
                closed -= w[n] * C[n]
            f[m] = undo[d, 0]
            end[n] = undo[d, 1]
            k[n] = undo[d, 2]
            r[n] = undo[d, 3]
            bar[n] = undo[d, 4]
            C[n] = undo[d, 5]
            s_last = move_s[d - 1] if d > 0 else -1
            n_last = move_n[d - 1] if d > 0 else -1
    return best, found, best_n, best_m, best_s, nodes, finished, dominated_nodes, root_bound


@kernel
def _children(d, f, bar, r, R, Tc, gpu_class, s_last, n_last, cand_n, cand_m, cand_s, sort_key):
    """The children of a node, earliest finish first: each open job's next task on each GPU, at
    its earliest start, if that start keeps the (start, job) order; of identical GPUs with the
    same free time, only the first."""
    N, M = Tc.shape
    c = 0
    for n in range(N):
        if r[n] >= R[n]:
            continue
        for m in range(M):
            s = bar[n] if bar[n] > f[m] else f[m]
            if s < s_last or (s == s_last and n < n_last):
                continue
            twin = False
            for m2 in range(m):
                if gpu_class[m2] == gpu_class[m] and f[m2] == f[m]:
                    twin = True
                    break
            if twin:
                continue
            key = (s + Tc[n, m]) * (N * M) + c  # finish time, then generation order
            j = c - 1
            while j >= 0 and sort_key[j] > key:
                cand_n[d, j + 1] = cand_n[d, j]
                cand_m[d, j + 1] = cand_m[d, j]
                cand_s[d, j + 1] = cand_s[d, j]
                sort_key[j + 1] = sort_key[j]
                j -= 1
            cand_n[d, j + 1] = n
            cand_m[d, j + 1] = m
            cand_s[d, j + 1] = s
            sort_key[j + 1] = key
            c += 1
    return c


@kernel
def _dominated(
    f,
    bar,
    end,
    r,
    R,
    gpu_class,
    closed,
    s_last,
    n_last,
    sum_starts,
    key,
    table,
    store,
    fill,
    cur,
    slots,
):
    """Write this node's state into ``cur`` (GPU free times sorted within identical GPUs) and
    say whether a visited node with the same dispatched tasks dominates it."""
    M = f.shape[0]
    N = bar.shape[0]
    for m in range(M):
        cur[m] = f[m]
    for m in range(M):
        for m2 in range(m + 1, M):
            if gpu_class[m2] == gpu_class[m] and cur[m2] < cur[m]:
                tmp = cur[m]
                cur[m] = cur[m2]
                cur[m2] = tmp
    for n in range(N):
        cur[M + n] = bar[n] if r[n] < R[n] else 0
        cur[M + N + n] = end[n] if r[n] < R[n] else 0
    cur[M + 2 * N] = closed
    cur[M + 2 * N + 1] = s_last
    cur[M + 2 * N + 2] = n_last
    cur[M + 2 * N + 3] = sum_starts
    if key not in table:
        return False
    b = table[key]
    SW = M + 2 * N + 4
    for slot in range(min(fill[b], slots)):
        ok = True
        for x in range(M + 2 * N + 1):  # GPU free times, barriers, round ends, closed cost
            if store[b, slot, x] > cur[x]:
                ok = False
                break
        if not ok:
            continue
        s0 = store[b, slot, M + 2 * N + 1]
        n0 = store[b, slot, M + 2 * N + 2]
        if s0 > s_last or (s0 == s_last and n0 > n_last):
            continue
        t0 = store[b, slot, M + 2 * N + 3]
        if t0 > sum_starts:
            continue
        if t0 < sum_starts or store[b, slot, M + 2 * N] < closed:
            return True
        same = True
        for x in range(SW):
            if store[b, slot, x] != cur[x]:
                same = False
                break
        if same:
            return True
    return False


def compile_search() -> None:
    """Compile (or load from numba's cache) the kernels on a one-job instance."""
    one = np.ones((1, 1), np.int64)
    search(
        one,
        one * 0,
        np.ones(1, np.int64),
        np.zeros(1, np.int64),
        np.ones(1, np.int64),
        np.ones(1, np.int64),
        np.zeros(1, np.int64),
        np.ones(1),
        np.ones(1),
        BIG,
        1e300,
        1,
        1,
        0,
        0,
        1,
        np.full(2, BIG, np.int64),
    )
