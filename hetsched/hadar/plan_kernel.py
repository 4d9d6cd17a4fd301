"""A DP plan (:class:`hetsched.hadar.dp_allocation.DpPlan`) compacted to a shorter queue,
compiled: the plan of a queue that lost jobs, without a search.

A plan's takes are facts about a free-GPU vector F and a class of jobs alone (the entry F' the
class's gang leaves, its slowest type and cost: :func:`hetsched.hadar.dp_kernel.sweep`), and
the plan knows the take of every class that has a job at or after the first index k_min(F) at
which F is reached. A queue that is the plan's with jobs removed reaches a subset of its
vectors, each at a first index at or after the plan's (counted in the jobs left), so every take
it needs is known: :func:`compact` follows them from the root, in decreasing number of free
GPUs, and keeps the vectors reached with their first indices in the shorter queue. That is the
plan a new :func:`~hetsched.hadar.dp_kernel.sweep` of the shorter queue would reach (the same
vectors, first indices and takes), without one FIND_ALLOC.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.hadar import state_table
from hetsched.hadar.dp_kernel import _FULL, _NONE, class_chains, entries


@kernel
def compact(plan, classes, bits, n_words):
    """The plan (:func:`hetsched.hadar.dp_kernel.start`'s tuple) of the queue of plan classes
    ``classes``, a subsequence of the plan's queue: (states, first indices of the entries kept,
    plan). A take of a vector kept to a vector that is not kept is left unknown (no job of its
    class comes after the vector's first index; a later sweep finds it again if one arrives)."""
    slots, e_idx, e_key, e_val, rows, link, take, slow_of, cost_of, head, n_e, filled = plan
    n, n_cls = classes.shape[0], take.shape[1]
    first_of, nxt = class_chains(classes, n_cls)
    never = n + 1
    k_of = np.full(n_e, never, np.int64)  # each vector's first index in the shorter queue
    k_of[0] = 0  # the root (the entry of :func:`start`)
    full = np.zeros(n + 1, np.bool_)  # the states (k, no free GPU) a take that fills reaches
    for total in range(head.shape[0] - 1, 0, -1):
        e = head[total]
        while e >= 0:
            k = k_of[e]
            if k < never:
                for c in range(n_cls):
                    i = first_of[c]
                    while i >= 0 and i < k:
                        i = nxt[i]
                    if i < 0:
                        continue
                    f = take[e, c]
                    if f == _NONE:
                        raise ValueError("compact: a take the shorter queue needs is not known")
                    if f >= 0:
                        k_of[f] = min(k_of[f], i + 1)
                    elif f == _FULL:
                        while i >= 0:
                            full[i + 1] = True
                            i = nxt[i]
            e = link[e]
    kept = np.full(n_e, -1, np.int64)  # old entry -> new one
    m = 0
    for e in range(n_e):
        if k_of[e] < never:
            kept[e] = m
            m += 1
    size = max(m, e_idx.shape[0] // 2, 1)
    slots2, e_idx2, e_key2, e_val2 = state_table.new(n_words, 1)
    slots2, e_idx2, e_key2, e_val2 = state_table.reserve(slots2, e_idx2, e_key2, e_val2, 0, size)
    rows2, link2, take2, slow2, cost2, head2 = entries(
        e_idx2.shape[0], rows.shape[1], n_cls, head.shape[0] - 1
    )
    k_min = np.empty(m, np.int64)
    states = 0
    for e in range(n_e):
        g = kept[e]
        if g < 0:
            continue
        state_table.insert(slots2, e_idx2, e_key2, g, 0, e_key[e])
        e_val2[g, 0] = k_of[e]
        k_min[g] = k_of[e]
        states += n - k_of[e] + 1
        rows2[g] = rows[e]
        left = 0
        for cc in range(rows.shape[1]):
            left += rows[e, cc]
        link2[g] = head2[left]
        head2[left] = g
        for c in range(n_cls):
            f = take[e, c]
            if f >= 0:
                f = kept[f]  # -1 (unknown) where the vector it leaves is not kept
            take2[g, c] = f
            slow2[g, c] = slow_of[e, c]
            cost2[g, c] = cost_of[e, c]
    for k in range(n + 1):
        if full[k]:
            states += 1
    plan2 = (slots2, e_idx2, e_key2, e_val2, rows2, link2, take2, slow2, cost2, head2, m, full)
    return states, k_min, plan2
