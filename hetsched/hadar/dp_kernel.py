"""DP_allocation (Hadar's Algorithm 2, lines 1-21) compiled: the memoized recursion of
:func:`hetsched.hadar.dp_allocation.dp_allocation` run on an explicit stack over the arrays of
:class:`hetsched.hadar.slot_arrays.SlotArrays`, with FIND_ALLOC from
:mod:`hetsched.hadar.bnb_kernel` and the memo in :mod:`hetsched.hadar.state_table`.

A state (idx, free GPUs) is evaluated once, as the paper says: skip (line 15) first, then take
job idx with FIND_ALLOC's gang (line 14) if it has a candidate; the state keeps the take only if
it is strictly better (lines 16-21, on payoffs). Every state evaluated counts against the state
budget, the terminal ones (end of the queue, or no free GPU: line 1) included.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from hetsched.hadar import state_table
from hetsched.hadar.bnb_kernel import apply, find, scratch

# the phases of a frame: the skip branch to evaluate, the take branch to evaluate, both done
_START, _AFTER_SKIP, _AFTER_TAKE = 0, 1, 2


@nb.njit(cache=True)
def dp(free0, job, bits, n_words, budget):
    """(value, queue positions taken, states evaluated, over budget). ``budget`` < 0: none; the
    DP stops as soon as it begins its (budget + 1)-th state and reports it over budget (value
    and positions are then empty). ``job``: FIND_ALLOC's arrays
    (:meth:`hetsched.hadar.slot_arrays.SlotArrays.find_args`)."""
    cap, need = job[0], job[5]
    n = need.shape[0]
    H, R = cap.shape
    HR = H * R
    work = scratch(H, R)
    slots, e_idx, e_key, e_val = state_table.new(n_words, 2)  # (value, 1 if taken)
    n_e = 0  # states whose evaluation began (each has its entry from then on)
    met = 0
    depth = n + 2
    f_idx = np.empty(depth, np.int64)
    f_free = np.empty((depth, HR), np.int64)
    f_key = np.empty((depth, n_words), np.uint64)  # the packed free GPUs, once a frame
    f_entry = np.empty(depth, np.int64)  # the state's entry in the table
    f_phase = np.empty(depth, np.int64)
    f_skip = np.empty(depth, np.float64)
    f_payoff = np.empty(depth, np.float64)
    f_idx[0] = 0
    f_free[0] = free0
    f_phase[0] = _START
    top = 1
    ret = 0.0  # the value of the frame that returned last
    while top > 0:
        t = top - 1
        idx = f_idx[t]
        free = f_free[t]
        if f_phase[t] == _START:
            key = f_key[t]
            state_table.pack(free, bits, key)
            e = state_table.find(slots, e_idx, e_key, idx, key)
            if e >= 0:  # memoized
                ret = e_val[e, 0]
                top -= 1
                continue
            met += 1
            if budget >= 0 and met > budget:
                return 0.0, np.empty(0, np.int64), met, True
            # the state's entry, its value written when it is known
            slots, e_idx, e_key, e_val = state_table.add(slots, e_idx, e_key, e_val, n_e, idx, key)
            f_entry[t] = n_e
            n_e += 1
            empty = True
            for c in range(HR):
                if free[c] != 0:
                    empty = False
                    break
            if idx >= n or empty:  # line 1
                e_val[f_entry[t], 0] = 0.0
                e_val[f_entry[t], 1] = 0.0
                ret = 0.0
                top -= 1
                continue
            f_phase[t] = _AFTER_SKIP
            f_idx[top] = idx + 1  # line 15: skip
            f_free[top] = free
            f_phase[top] = _START
            top += 1
        elif f_phase[t] == _AFTER_SKIP:
            f_skip[t] = ret
            payoff, bh = find(idx, free, job, work)
            if payoff > 0.0:  # lines 7-9: a candidate
                f_payoff[t] = payoff
                f_phase[t] = _AFTER_TAKE
                f_free[top] = free
                apply(bh, idx, f_free[top], job, work)
                f_idx[top] = idx + 1  # line 14: take
                f_phase[top] = _START
                top += 1
                continue
            e_val[f_entry[t], 0] = ret
            e_val[f_entry[t], 1] = 0.0
            top -= 1
        else:
            value = f_payoff[t] + ret
            taken = value > f_skip[t]  # lines 16-21, on payoffs
            e_val[f_entry[t], 0] = value if taken else f_skip[t]
            e_val[f_entry[t], 1] = 1.0 if taken else 0.0
            ret = e_val[f_entry[t], 0]
            top -= 1
    # the choice: follow the decisions from the root
    key = np.empty(n_words, np.uint64)
    positions = np.empty(n, np.int64)
    k = 0
    free = free0.copy()
    for idx in range(n):
        state_table.pack(free, bits, key)
        e = state_table.find(slots, e_idx, e_key, idx, key)
        if e < 0:  # a terminal state: no free GPU left
            break
        if e_val[e, 1] > 0.0:
            positions[k] = idx
            k += 1
            _, bh = find(idx, free, job, work)
            apply(bh, idx, free, job, work)
    state_table.pack(free0, bits, key)
    root = state_table.find(slots, e_idx, e_key, 0, key)
    return e_val[root, 0], positions[:k], n_e, False


@nb.njit(cache=True)
def count_states(free0, job, bits, n_words, classes, budget):
    """How many states :func:`dp` evaluates, without evaluating them; stops counting past
    ``budget`` (>= 0) and returns what it has then. The DP evaluates every state it can reach:
    from (k, F) with F not empty it reaches (k + 1, F) by a skip, so the states with free GPUs F
    are (k, F) for every k from the first index k_min(F) at which F is reachable to n, and the
    states with no free GPU are the (i + 1, 0) of the takes that fill the cluster. So the count
    is sum_F (n - k_min(F) + 1) over the reachable F, plus those. The F are taken in decreasing
    number of free GPUs (a take lowers it), so k_min(F) is known when F is.

    ``classes[i]``: job i's class, jobs with the same type order and gang size. Under the
    min-cost rule FIND_ALLOC gives every job of a class the same gang: the cheapest gangs do not
    depend on the job, and among them each job takes the first of the fewest types, since U_j
    does not grow with the gang's slowest type (U_j falls with the JCT, the JCT with the rate).
    A job of the class then has a candidate where its payoff, U_j at that gang's rate less its
    cost, is positive. Under ``max-payoff`` the caller gives each job its own class."""
    cap, order, need, util = job[0], job[3], job[5], job[7]
    n = need.shape[0]
    H, R = cap.shape
    HR = H * R
    total0 = 0
    for c in range(HR):
        total0 += free0[c]
    if n == 0 or total0 == 0:
        return 1
    work = scratch(H, R)
    gang_q, gang_cost = work[3], work[4]
    n_cls = 0
    for i in range(n):
        n_cls = max(n_cls, classes[i] + 1)
    first_of = np.full(n_cls, -1, np.int64)  # a class's first job, its representative
    nxt = np.full(n, -1, np.int64)  # the next job of the same class
    last = np.full(n_cls, -1, np.int64)
    for i in range(n):
        c = classes[i]
        if first_of[c] < 0:
            first_of[c] = i
        else:
            nxt[last[c]] = i
        last[c] = i
    slots, e_idx, e_key, e_val = state_table.new(n_words, 1)  # F -> k_min(F)
    rows = np.empty((e_idx.shape[0], HR), np.int64)
    link = np.empty(e_idx.shape[0], np.int64)  # the next F with as many free GPUs
    head = np.full(total0 + 1, -1, np.int64)
    filled = np.zeros(n + 1, np.bool_)  # the k of the states (k, no free GPU)
    key = np.empty(n_words, np.uint64)
    state_table.pack(free0, bits, key)
    slots, e_idx, e_key, e_val = state_table.add(slots, e_idx, e_key, e_val, 0, 0, key)
    e_val[0, 0] = 0.0
    rows[0] = free0
    link[0] = -1
    head[total0] = 0
    n_e = 1
    count = 0
    after = np.empty(HR, np.int64)
    for total in range(total0, 0, -1):
        e = head[total]
        while e >= 0:
            k = np.int64(e_val[e, 0])
            count += n - k + 1
            if budget >= 0 and count > budget:
                return count
            free = rows[e].copy()
            for c in range(n_cls):
                i = first_of[c]
                while i >= 0 and i < k:
                    i = nxt[i]
                if i < 0:
                    continue
                _, h = find(i, free, job, work)
                if h < 0:  # no gang fits
                    continue
                slow = order[i, gang_q[h] - 1]  # the gang's slowest type: its q-th
                cost = gang_cost[h]
                while i >= 0 and not util[i, slow] - cost > 0.0:
                    i = nxt[i]
                if i < 0:  # no job of the class from k on has a candidate here
                    continue
                after[:] = free
                apply(h, i, after, job, work)
                left = 0
                for cc in range(HR):
                    left += after[cc]
                if left == 0:
                    while i >= 0:  # each such take reaches (i + 1, no free GPU)
                        if util[i, slow] - cost > 0.0:
                            filled[i + 1] = True
                        i = nxt[i]
                    continue
                state_table.pack(after, bits, key)
                f = state_table.find(slots, e_idx, e_key, 0, key)
                if f >= 0:
                    e_val[f, 0] = min(e_val[f, 0], i + 1)
                    continue
                if n_e == e_idx.shape[0]:
                    rows2 = np.empty((2 * n_e, HR), np.int64)
                    rows2[:n_e] = rows
                    rows = rows2
                    link2 = np.empty(2 * n_e, np.int64)
                    link2[:n_e] = link
                    link = link2
                slots, e_idx, e_key, e_val = state_table.add(
                    slots, e_idx, e_key, e_val, n_e, 0, key
                )
                e_val[n_e, 0] = i + 1
                rows[n_e] = after
                link[n_e] = head[left]
                head[left] = n_e
                n_e += 1
            e = link[e]
    for k in range(n + 1):
        if filled[k]:
            count += 1
    return count
