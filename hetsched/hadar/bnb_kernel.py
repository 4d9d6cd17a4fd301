"""The compiled arithmetic of :mod:`hetsched.hadar.branch_and_bound`: the node bound, the
first incumbents and the depth-first search, on arrays (FIND_ALLOC: :mod:`hetsched.hadar.find_kernel`).

A queued job is its queue position i. Free GPUs are one flat array over the (machine, type)
cells, ``free[h * R + r]``. What a job gets does not depend on the slot beyond the arrays below,
all worked out once per slot by the caller:

* ``order[i, :n_order[i]]``: job i's usable types, fastest first (Algorithm 2, line 23);
* ``util[i, r]``: U_i at the rate of a gang whose slowest type is r (a gang's rate is set by its
  slowest type, so one value per type serves every set of types);
* ``price[h, r, g]``: k(g) of (5) for cell (h, r) with g GPUs allocated, and the same as ranks
  into its distinct values in ascending order (``price_rank``, ``price_sorted``);
* ``suffix_value[idx, G]``: the fractional knapsack V(G) of the bound over the queue from idx.

FIND_ALLOC, the gangs and their replay: :mod:`hetsched.hadar.find_kernel`.

A node's state (idx, free GPUs) is remembered with the best value it was reached with
(:mod:`hetsched.hadar.state_table`); the chosen jobs are a chain of (parent, queue position)
entries shared between nodes.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from hetsched.core.compiled import kernel
from hetsched.hadar import state_table
from hetsched.hadar.find_kernel import apply, canon, find, scratch

#: how many nodes pass between two looks at the clock
CLOCK_EVERY = 1 << 12


@kernel
def _now():
    with nb.objmode(t="float64"):
        t = time.perf_counter()
    return t


@kernel
def suffix_knapsack(need, ub, by_ratio, n_free):
    """``suffix_value``: for each queue position idx, the fractional knapsack V(G), G = 0..n_free,
    of the jobs from idx on taken in the order ``by_ratio`` (best u/W first): the piecewise-linear
    curve through the points (sum of W, sum of u) of its prefixes, flat past the last. The sums
    run in the same order, and each value is NumPy's ``interp`` formula on the same points, so
    the table is the one ``np.interp`` gives, to the bit (a test compares them)."""
    n = need.shape[0]
    out = np.zeros((n + 1, n_free + 1))
    cum_w = np.empty(n + 1)
    cum_v = np.empty(n + 1)
    for idx in range(n):
        cum_w[0] = 0.0
        cum_v[0] = 0.0
        m = 0
        w = 0
        v = 0.0
        for k in range(n):
            p = by_ratio[k]
            if p >= idx:
                w += need[p]
                v += ub[p]
                m += 1
                cum_w[m] = w
                cum_v[m] = v
        j = 0
        for g in range(n_free + 1):
            x = float(g)
            if x >= cum_w[m]:  # at or past the last point
                out[idx, g] = cum_v[m]
                continue
            while cum_w[j + 1] <= x:  # cum_w[j] <= x < cum_w[j + 1]
                j += 1
            if cum_w[j] == x:
                out[idx, g] = cum_v[j]
            else:
                slope = (cum_v[j + 1] - cum_v[j]) / (cum_w[j + 1] - cum_w[j])
                y = slope * (x - cum_w[j]) + cum_v[j]
                if np.isnan(y):  # as NumPy: from the other end, then the flat value
                    y = slope * (x - cum_w[j + 1]) + cum_v[j + 1]
                    if np.isnan(y) and cum_v[j] == cum_v[j + 1]:
                        y = cum_v[j]
                out[idx, g] = y
    return out


@kernel
def node_bound(
    idx, n, free, cap, price_rank, price_sorted, w_max, suffix_value, lam, suffix_net, counts
):
    """The lesser of two bounds of the module doc of :mod:`hetsched.hadar.branch_and_bound`:
    max(0, max_G V(G) - C(G)), and L(idx, F) = ``suffix_net[idx, f]`` + sum_r ``lam[r]`` f_r of
    :mod:`hetsched.hadar.type_bound` (f: the node's free GPUs, f_r those of type r). C(G) sums the G smallest GPU prices; they are counted per
    distinct price (``price_sorted[price_rank[h, r, g]]`` = k(g) of cell (h, r)) instead of
    sorted, which adds the same values in the same order."""
    if idx >= n:
        return 0.0
    H, R = cap.shape
    counts[:] = 0
    f = 0
    lag = 0.0
    for h in range(H):
        for r in range(R):
            c = cap[h, r]
            fr = free[h * R + r]
            if c <= 0 or fr == 0:
                continue
            lag += lam[r] * fr
            g0 = c - fr
            flat = fr if fr < w_max else w_max  # k <= W_max: the level before any job, g0
            counts[price_rank[h, r, g0]] += flat
            for k in range(w_max + 1, fr + 1):
                counts[price_rank[h, r, g0 + k - w_max]] += 1
            f += fr
    if f == 0:
        return 0.0
    lag += suffix_net[idx, f]
    best = suffix_value[idx, 0]  # C(0) = 0
    acc = 0.0
    g = 0
    for p in range(price_sorted.shape[0]):
        v = price_sorted[p]
        for _ in range(counts[p]):
            acc += v
            g += 1
            d = suffix_value[idx, g] - acc
            if d > best:
                best = d
    if lag < best:
        best = lag
    return best if best > 0.0 else 0.0


@kernel
def _chain_push(ch_parent, ch_pos, n_ch, parent, pos):
    """Entry ``n_ch`` of the chains: (parent entry, queue position); returns the arrays."""
    if n_ch == ch_pos.shape[0]:
        ch_parent = state_table.grow(ch_parent, 2 * n_ch)
        ch_pos = state_table.grow(ch_pos, 2 * n_ch)
    ch_parent[n_ch] = parent
    ch_pos[n_ch] = pos
    return ch_parent, ch_pos


@kernel
def _push(stack, top, idx, free, value, chain, bound):
    """A node onto the search's stack (its arrays ``stack``) at ``top``; returns the new top."""
    s_idx, s_free, s_val, s_chain, s_pb = stack
    s_idx[top] = idx
    s_free[top] = free
    s_val[top] = value
    s_chain[top] = chain
    s_pb[top] = bound
    return top + 1


@kernel
def search(free0, job, bound, bits, n_words, node_limit, deadline):
    """The first incumbents, then the depth-first search of :mod:`hetsched.hadar.branch_and_bound`.
    ``job``: FIND_ALLOC's arrays, ``bound``: the bound's
    (:meth:`hetsched.hadar.slot_arrays.SlotArrays.bound_args`). Returns (best value, its queue
    positions, upper bound, proven, nodes)."""
    cap, mclass, need = job[0], job[1], job[5]
    price_rank, price_sorted, suffix_value, lam, suffix_net, rank, w_max, ordered = bound
    n = need.shape[0]
    H, R = cap.shape
    HR = H * R
    work = scratch(H, R)
    root = free0.copy()  # every vector canonical (find_kernel.canon; apply keeps it so)
    canon(root, mclass, R, np.empty(0, np.int64))
    counts = np.zeros(price_sorted.shape[0], np.int64)
    # the chains of chosen jobs: entry e = (parent entry, queue position)
    ch_parent = np.empty(1024, np.int64)
    ch_pos = np.empty(1024, np.int64)
    n_ch = 0

    best_value = 0.0
    best_chain = -1
    for k in range(rank.shape[0]):  # incumbents: one pass in queue order per ranking and m,
        m = 1  # taking only the m best jobs of the ranking (SlotArrays.rank)
        while True:
            free = root.copy()
            value = 0.0
            chain = -1
            for i in range(n):
                if rank[k, i] >= m:
                    continue
                empty = True
                for c in range(HR):
                    if free[c] != 0:
                        empty = False
                        break
                if empty:
                    continue
                payoff, bh = find(i, free, job, work)
                if payoff > 0.0:
                    apply(bh, i, free, job, work)
                    value += payoff
                    ch_parent, ch_pos = _chain_push(ch_parent, ch_pos, n_ch, chain, i)
                    chain = n_ch
                    n_ch += 1
            if value > best_value:
                best_value, best_chain = value, chain
            if m >= n:
                break
            m = min(n, max(m + 1, int(m * 1.25)))

    # the states met, each with the best value it was reached with
    slots, e_idx, e_key, e_val = state_table.new(n_words, 1)
    key = np.empty(n_words, np.uint64)
    n_e = 0

    depth = 2 * n + 4
    s_idx = np.empty(depth, np.int64)
    s_free = np.empty((depth, HR), np.int64)
    s_val = np.empty(depth, np.float64)
    s_chain = np.empty(depth, np.int64)
    s_pb = np.empty(depth, np.float64)
    top = 0
    s_idx[0] = 0
    s_free[0] = root
    s_val[0] = 0.0
    s_chain[0] = -1
    s_pb[0] = np.inf
    top = 1
    nodes = 0
    stopped = False
    after = np.empty(HR, np.int64)
    free = np.empty(HR, np.int64)
    while top > 0:
        if nodes >= node_limit or (nodes % CLOCK_EVERY == 0 and nodes > 0 and _now() > deadline):
            stopped = True
            break
        top -= 1
        idx = s_idx[top]
        free[:] = s_free[top]
        value = s_val[top]
        chain = s_chain[top]
        pb = s_pb[top]
        if pb <= best_value + 1e-12:
            continue
        # the same state reached before with at least this value is not searched again
        state_table.pack(free, bits, key)
        found = state_table.find(slots, e_idx, e_key, idx, key)
        if found >= 0:
            if e_val[found, 0] >= value:
                continue
            e_val[found, 0] = value
        else:
            slots, e_idx, e_key, e_val = state_table.add(slots, e_idx, e_key, e_val, n_e, idx, key)
            e_val[n_e, 0] = value
            n_e += 1
        nodes += 1
        if value > best_value:
            best_value, best_chain = value, chain
        b = value + node_bound(
            idx,
            n,
            free,
            cap,
            price_rank,
            price_sorted,
            w_max,
            suffix_value,
            lam,
            suffix_net,
            counts,
        )
        if b <= best_value + 1e-12 or idx >= n:
            continue
        payoff, bh = find(idx, free, job, work)
        take = payoff > 0.0
        skip_first = False  # the stack's last child is explored first: take, unless ordered
        if take:
            after[:] = free
            apply(bh, idx, after, job, work)
            ch_parent, ch_pos = _chain_push(ch_parent, ch_pos, n_ch, chain, idx)
            n_ch += 1
            if ordered:  # the child of the larger bound first
                bound_args = (cap, price_rank, price_sorted, w_max, suffix_value, lam, suffix_net)
                taken = node_bound(idx + 1, n, after, *bound_args, counts)
                skipped = node_bound(idx + 1, n, free, *bound_args, counts)
                skip_first = value + skipped > value + payoff + taken
        stack = (s_idx, s_free, s_val, s_chain, s_pb)
        if take and skip_first:
            top = _push(stack, top, idx + 1, after, value + payoff, n_ch - 1, b)
        top = _push(stack, top, idx + 1, free, value, chain, b)
        if take and not skip_first:
            top = _push(stack, top, idx + 1, after, value + payoff, n_ch - 1, b)
    upper = best_value
    if stopped:
        for s in range(top):
            if s_pb[s] > upper:
                upper = s_pb[s]
    k = 0
    c = best_chain
    while c >= 0:
        k += 1
        c = ch_parent[c]
    taken = np.empty(k, np.int64)
    c = best_chain
    while c >= 0:
        k -= 1
        taken[k] = ch_pos[c]
        c = ch_parent[c]
    return best_value, taken, upper, not stopped, nodes
