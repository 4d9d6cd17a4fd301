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
from hetsched.hadar.bnb_kernel import _apply, find, scratch

# the phases of a frame: the skip branch to evaluate, the take branch to evaluate, both done
_START, _AFTER_SKIP, _AFTER_TAKE = 0, 1, 2


@nb.njit(cache=True)
def dp(
    free0,
    cap,
    mclass,
    base,
    order,
    n_order,
    need,
    thr,
    util,
    price,
    comm_cost,
    min_cost,
    bits,
    n_words,
    budget,
):
    """(value, queue positions taken, states evaluated, over budget). ``budget`` < 0: none; the
    DP stops as soon as it begins its (budget + 1)-th state and reports it over budget (value
    and positions are then empty)."""
    n = need.shape[0]
    H, R = cap.shape
    HR = H * R
    work = scratch(H, R)
    gh, gr, gn = work[0], work[1], work[2]
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
            payoff, bh = find(
                idx, free, cap, mclass, base, order, n_order, need, thr, util, price, comm_cost,
                min_cost, work,
            )  # fmt: skip
            if payoff > 0.0:  # lines 7-9: a candidate
                f_payoff[t] = payoff
                f_phase[t] = _AFTER_TAKE
                f_free[top] = free
                _apply(bh, idx, f_free[top], order, n_order, need, thr, H, R, gh, gr, gn)
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
            _, bh = find(
                idx, free, cap, mclass, base, order, n_order, need, thr, util, price, comm_cost,
                min_cost, work,
            )  # fmt: skip
            _apply(bh, idx, free, order, n_order, need, thr, H, R, gh, gr, gn)
    state_table.pack(free0, bits, key)
    root = state_table.find(slots, e_idx, e_key, 0, key)
    return e_val[root, 0], positions[:k], n_e, False
