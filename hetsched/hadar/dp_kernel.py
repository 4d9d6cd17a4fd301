"""DP_allocation (Hadar's Algorithm 2, lines 1-21) compiled, over the arrays of
:class:`hetsched.hadar.slot_arrays.SlotArrays`, with FIND_ALLOC from
:mod:`hetsched.hadar.bnb_kernel` and :mod:`hetsched.hadar.state_table`.

The paper memoizes the DP on its states (queue index k, free GPUs F); every state it reaches is
evaluated once, and counts against the state budget, the terminal ones (end of the queue, or
no free GPU: line 1) included. Here the same states and the same recursion are evaluated in
another order: :func:`reach` finds the free-GPU vectors F the DP reaches, with the first index
at which each is reached and, per class of jobs, the F its take leaves (one FIND_ALLOC per F and
class, not per state); :func:`dp` then fills in the values of all the states of each F, a loop
over k with no search. On the multi-GPU Philly window a 480-job slot has 40 million states over
272,335 vectors F.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.hadar import state_table
from hetsched.hadar.find_kernel import apply, canon, find, memo_codes, scratch

# a class's take at a free-GPU vector: no job of the class from the vector's first index on,
# one that fills the cluster, or no gang that fits (else the entry of the free GPUs it leaves)
_NONE, _FULL, _NOFIT = -1, -2, -3


@kernel
def start(free0, bits, n_words, n_cls, mclass):
    """A plan with the root alone (free GPUs ``free0``, first index 0) and no take known, for
    :func:`sweep`: (slots, e_idx, e_key, e_val, rows, link, take, slow_of, cost_of, head, n_e,
    filled),
    the state table of the vectors F (their first index k_min(F) as the entry's value) and, per
    entry, its row of free GPUs, the next entry with as many free GPUs, and per class its take
    (the entry it leaves), the gang's slowest type and cost; ``head[g]``: the first entry with g
    free GPUs; ``filled[k]``: whether a take that fills the cluster reaches (k, no free GPU)."""
    HR = free0.shape[0]
    root = free0.copy()  # canonical (:func:`hetsched.hadar.find_kernel.canon`)
    canon(root, mclass, HR // mclass.shape[0], np.empty(0, np.int64))
    total0 = 0
    for c in range(HR):
        total0 += free0[c]
    slots, e_idx, e_key, e_val = state_table.new(n_words, 1)  # F -> k_min(F)
    rows, link, take, slow_of, cost_of, head = entries(e_idx.shape[0], HR, n_cls, total0)
    key = np.empty(n_words, np.uint64)
    state_table.pack(root, bits, key)
    slots, e_idx, e_key, e_val = state_table.add(slots, e_idx, e_key, e_val, 0, 0, key)
    e_val[0, 0] = 0.0
    rows[0] = root
    head[total0] = 0
    filled = np.zeros(1, np.bool_)
    return slots, e_idx, e_key, e_val, rows, link, take, slow_of, cost_of, head, 1, filled


@kernel
def entries(size, HR, n_cls, total0):
    """A plan's per-entry arrays for ``size`` entries and none listed: (rows, link, take,
    slow_of, cost_of, head), each take unknown, ``head`` over 0..``total0`` free GPUs."""
    return (
        np.empty((size, HR), np.int64),
        np.full(size, -1, np.int64),
        np.full((size, n_cls), _NONE, np.int64),
        np.zeros((size, n_cls), np.int64),
        np.zeros((size, n_cls), np.float64),
        np.full(total0 + 1, -1, np.int64),
    )


@kernel
def _widen(a, n_cls, fill):
    """``a`` with its columns padded to ``n_cls`` with ``fill`` (a class first met)."""
    if a.shape[1] >= n_cls:
        return a
    out = np.full((a.shape[0], n_cls), fill, a.dtype)
    out[:, : a.shape[1]] = a
    return out


@kernel
def _takes(table, e_val, total, e, n_e, count, job, work, bits, key, after, classes, first_of,
           nxt, rep, todo, budget, literal):  # fmt: skip
    """:func:`sweep`'s loop over the entries from entry ``e`` of those with ``total`` free GPUs
    on (then fewer free GPUs), until every take is known (total 0 returned), the state count
    passes ``budget`` (over) or the table has no room for an entry's new vectors (the caller
    grows it and calls again from the entry returned): (total, e, entries, states, over). The
    arrays are never reassigned here (:func:`hetsched.hadar.state_table.reserve`)."""
    slots, e_idx, e_key, rows, link, take, slow_of, cost_of, head = table
    order, util = job[3], job[7]
    gang_q, gang_cost = work[3], work[4]
    n, n_cls, HR = classes.shape[0], first_of.shape[0], after.shape[0]
    while total > 0:
        if e < 0:
            total -= 1
            if total > 0:
                e = head[total]
            continue
        if n_e + n_cls > rows.shape[0]:  # an entry adds a vector per class at most
            return total, e, n_e, count, False
        k = np.int64(e_val[e, 0])
        count += n - k + 1
        if budget >= 0 and count > budget:
            return total, e, n_e, count, True
        free = rows[e]
        for c in range(n_cls):
            if not todo[c] or take[e, c] != _NONE:  # known: on F and the class alone
                continue
            i = first_of[c]
            while i >= 0 and i < k:
                i = nxt[i]
            if i < 0:
                continue
            r = i if literal else rep[c]
            if r < 0:
                raise ValueError("sweep: a class with a job to take has no job in the arrays")
            _, h = find(r, free, job, work)
            if h < 0:  # no gang fits
                take[e, c] = _NOFIT
                continue
            slow = order[r, gang_q[h] - 1]  # the gang's slowest type: its q-th
            cost = gang_cost[h]
            slow_of[e, c] = slow
            cost_of[e, c] = cost
            while literal and i >= 0 and not util[i, slow] - cost > 0.0:
                i = nxt[i]
            if i < 0:  # no job of the class from k on has a candidate here
                continue
            after[:] = free
            apply(h, r, after, job, work)
            left = 0
            for cc in range(HR):
                left += after[cc]
            if left == 0:
                take[e, c] = _FULL
                continue
            state_table.pack(after, bits, key)
            f = state_table.find(slots, e_idx, e_key, 0, key)
            if f < 0:
                state_table.insert(slots, e_idx, e_key, n_e, 0, key)
                f = n_e
                e_val[f, 0] = i + 1
                rows[f] = after
                link[f] = head[left]
                head[left] = f
                n_e += 1
            elif i + 1 < e_val[f, 0]:
                e_val[f, 0] = i + 1
            take[e, c] = f
        e = link[e]
    return 0, -1, n_e, count, False


@kernel
def sweep(plan, job, bits, n_words, classes, rep, todo, budget, literal):
    """Every take not yet known in ``plan`` (:func:`start`) for the queue of ``classes``
    (``classes[i]``: job i's class), and the vectors they reach: (states, over budget, plan).

    A vector F's take for class c is that of the first job of c from k_min(F) on (FIND_ALLOC
    at ``rep[c]``, a job of the class in ``job``'s arrays, or at that job itself if
    ``literal``); it depends on F and the class alone, so a take once found stays. So a plan
    reached for a queue serves that queue with jobs appended (an *extension*): only the takes
    of the appended jobs' classes where no earlier job of theirs came after k_min(F) are new,
    and the vectors they reach have a first index past the old queue, so no old k_min moves.
    ``todo[c]``: class c may have takes to find (every class of a new plan; an extension's
    appended classes, since no other class has a job past the old queue); the marks of
    ``filled`` of the other classes stand."""
    slots, e_idx, e_key, e_val, rows, link, take, slow_of, cost_of, head, n_e, filled = plan
    cap, order, util = job[0], job[3], job[7]
    n = classes.shape[0]
    H, R = cap.shape
    HR = H * R
    n_cls = 1
    for i in range(n):
        n_cls = max(n_cls, classes[i] + 1)
    # a memo of consolidated gangs per machine state and class: the memo row of the job
    # FIND_ALLOC is asked for (``rep[c]``, or each job itself if ``literal``) is its class
    memo_row = np.full(order.shape[0], -1, np.int64)
    if literal:
        memo_row[:] = classes
    else:
        for c in range(rep.shape[0]):
            if rep[c] >= 0:
                memo_row[rep[c]] = c
    work = scratch(H, R, memo_row, memo_codes(job[1], job[2], R, n_cls))
    take = _widen(take, n_cls, _NONE)
    slow_of = _widen(slow_of, n_cls, 0)
    cost_of = _widen(cost_of, n_cls, 0.0)
    first_of, nxt = class_chains(classes, n_cls)
    total0 = head.shape[0] - 1
    if filled.shape[0] < n + 1:  # the k of the states (k, no free GPU); a longer queue's
        grown = np.zeros(n + 1, np.bool_)
        grown[: filled.shape[0]] = filled
        filled = grown
    key = np.empty(n_words, np.uint64)
    count = 0
    over = False
    if n == 0 or total0 == 0:  # the root alone, a terminal state
        head[total0] = -1
        plan = (slots, e_idx, e_key, e_val, rows, link, take, slow_of, cost_of, head, n_e, filled)
        return 1, over, plan
    after = np.empty(HR, np.int64)
    total, e = total0, head[total0]
    while True:  # the takes, until the table is full; then grown, and on from where it was
        table = (slots, e_idx, e_key, rows, link, take, slow_of, cost_of, head)
        total, e, n_e, count, over = _takes(
            table, e_val, total, e, n_e, count, job, work, bits, key, after,
            classes, first_of, nxt, rep, todo, budget, literal,
        )  # fmt: skip
        if over or total == 0:
            break
        size = 2 * rows.shape[0]
        rows, link = state_table.grow(rows, size), state_table.grow(link, size)
        take = state_table.grow(take, size)
        take[n_e:] = _NONE
        slow_of, cost_of = state_table.grow(slow_of, size), state_table.grow(cost_of, size)
        slots, e_idx, e_key, e_val = state_table.reserve(slots, e_idx, e_key, e_val, n_e, size)
    if not over:  # each take that fills the cluster reaches (i + 1, no free GPU)
        for e in range(n_e):
            k = np.int64(e_val[e, 0])
            for c in range(n_cls):
                if not todo[c] or take[e, c] != _FULL:  # another class's marks stand
                    continue
                i = first_of[c]
                while i >= 0 and i < k:
                    i = nxt[i]
                while i >= 0:
                    if not literal or util[i, slow_of[e, c]] - cost_of[e, c] > 0.0:
                        filled[i + 1] = True
                    i = nxt[i]
        for k in range(n + 1):
            if filled[k]:
                count += 1
        over = budget >= 0 and count > budget
    plan = (slots, e_idx, e_key, e_val, rows, link, take, slow_of, cost_of, head, n_e, filled)
    return count, over, plan


@kernel
def first_indices(plan):
    """k_min(F) of each entry of ``plan``."""
    e_val, n_e = plan[3], plan[10]
    k_min = np.empty(n_e, np.int64)
    for e in range(n_e):
        k_min[e] = np.int64(e_val[e, 0])
    return k_min


@kernel
def reach(free0, job, bits, n_words, classes, budget, literal=True):
    """The free-GPU vectors F (canonical: :func:`hetsched.hadar.find_kernel.canon`) that
    DP_allocation reaches from ``free0``, each with the first
    queue index k_min(F) at which it is reached and, per class of jobs, its take there: the
    entry of the F it leaves (``_FULL`` if it fills the cluster, ``_NONE`` if no job of the
    class from k_min(F) on has a candidate, ``_NOFIT`` if no gang fits), the gang's slowest
    type and its cost. Returns (states, over budget, entries, rows, k_min, head, link, take,
    slow, cost), ``head[g]`` and ``link`` listing the entries with g free GPUs (:func:`sweep`
    from :func:`start`).

    The DP evaluates every state it can reach: from (k, F) with F not empty it reaches (k + 1, F)
    by a skip, so the states with free GPUs F are (k, F) for every k from k_min(F) to n, and the
    states with no free GPU are the (i + 1, 0) of the takes that fill the cluster. So it
    evaluates sum_F (n - k_min(F) + 1) states over the reachable F, plus those. The F are taken
    in decreasing number of free GPUs (a take lowers it), so k_min(F) is known when F is; past
    ``budget`` (>= 0) states it stops.

    ``classes[i]``: job i's class, jobs with the same type order and gang size. Under the
    min-cost rule FIND_ALLOC gives every job of a class the same gang: the cheapest gangs do not
    depend on the job, and among them each job takes the first of the fewest types, since U_j
    does not grow with the gang's slowest type (U_j falls with the JCT, the JCT with the rate).
    A job of the class then has a candidate where its payoff, U_j at that gang's rate less its
    cost, is positive. Under ``max-payoff`` the caller gives each job its own class. With
    ``literal`` False every take is followed whatever its payoff (:class:`DpPlan`'s superset)."""
    n = classes.shape[0]
    n_cls = 1
    for i in range(n):
        n_cls = max(n_cls, classes[i] + 1)
    rep = np.full(n_cls, -1, np.int64)  # each class's first job
    for i in range(n - 1, -1, -1):
        rep[classes[i]] = i
    todo = np.ones(n_cls, np.bool_)
    count, over, plan = sweep(
        start(free0, bits, n_words, n_cls, job[1]),
        job,
        bits,
        n_words,
        classes,
        rep,
        todo,
        budget,
        literal,
    )
    rows, link, take, slow_of, cost_of, head, n_e = plan[4:11]
    return count, over, n_e, rows, first_indices(plan), head, link, take, slow_of, cost_of


@kernel
def count_states(free0, job, bits, n_words, classes, budget):
    """How many states DP_allocation evaluates (:func:`reach`), counted up to ``budget``."""
    return reach(free0, job, bits, n_words, classes, budget)[0]


@kernel
def dp(free0, job, bits, n_words, classes, budget):
    """DP_allocation over the reachable free-GPU vectors (module doc): (value, queue positions
    taken, states, over budget); over the budget, value and positions are empty."""
    count, over, n_e, rows, k_min, head, link, take, slow_of, cost_of = reach(
        free0, job, bits, n_words, classes, budget
    )
    if over:
        return 0.0, np.empty(0, np.int64), count, True
    buffer = np.empty(0, np.float64)
    value, taken, _ = values(job[7], classes, k_min, head, link, take, slow_of, cost_of, buffer)
    return value, taken, count, False


@kernel
def values(util, classes, k_min, head, link, take, slow_of, cost_of, buffer):
    """The DP's values over what :func:`reach` found, and its choice: (value, queue positions
    taken, the array of the values). ``buffer``: that array from an earlier call, used again
    if large enough (a new one costs a page fault every 4 KB: 10% of a 40-million-state slot).

    Its value at (k, F), V_F[k] for k from k_min(F) to n, is V_F[k + 1] (skip job k, line 15)
    or, if job k has a candidate at F, its payoff plus V_F'[k + 1] at the free GPUs F' its take
    leaves (line 14), whichever is larger; the take only if strictly (lines 16-21, on payoffs).
    F' has fewer free GPUs than F, so the F are solved in increasing number of free GPUs."""
    n = util.shape[0]
    n_e = k_min.shape[0]
    if n == 0 or head.shape[0] <= 1:  # the root is terminal (line 1)
        return 0.0, np.empty(0, np.int64), buffer
    start = np.empty(n_e + 1, np.int64)  # V_F[k] is value[start[e] + k - k_min[e]]
    start[0] = 0
    for e in range(n_e):
        start[e + 1] = start[e] + n - k_min[e] + 1
    zeros = start[n_e]  # n + 1 zeros after the values: the rest after a take that fills F
    value = buffer if buffer.shape[0] >= zeros + n + 1 else np.empty(zeros + n + 1, np.float64)
    value[zeros : zeros + n + 1] = 0.0
    n_cls = take.shape[1]
    off = np.zeros(n_cls, np.int64)  # per class, V_F'[k + 1] of its take at F is value[off + k]
    slow = np.zeros(n_cls, np.int64)
    cost = np.zeros(n_cls, np.float64)  # inf where the class has no take at F
    for total in range(1, head.shape[0]):
        e = head[total]
        while e >= 0:
            for c in range(n_cls):
                f = take[e, c]
                off[c] = zeros if f < 0 else start[f] - k_min[f] + 1
                # no take: no payoff (its slowest type and cost were never written)
                none = f == _NONE or f == _NOFIT
                slow[c] = 0 if none else slow_of[e, c]
                cost[c] = np.inf if none else cost_of[e, c]
            base = start[e] - k_min[e]
            best = 0.0
            value[base + n] = best  # line 1: the end of the queue
            for k in range(n - 1, k_min[e] - 1, -1):
                c = classes[k]
                payoff = util[k, slow[c]] - cost[c]
                take_it = payoff + value[off[c] + k]
                # line 14 against line 15: the take where its payoff is positive and strictly better
                best = take_it if payoff > 0.0 and take_it > best else best
                value[base + k] = best
            e = link[e]
    # the choice: from the root, take job k where the take is strictly better
    taken = np.empty(n, np.int64)
    m = 0
    e = 0
    for k in range(n):
        base = start[e] - k_min[e]
        c = classes[k]
        f = take[e, c]
        if f == _NONE or f == _NOFIT:
            continue
        payoff = util[k, slow_of[e, c]] - cost_of[e, c]
        if payoff <= 0.0:
            continue
        rest = 0.0 if f == _FULL else value[start[f] - k_min[f] + k + 1]
        if payoff + rest > value[base + k + 1]:
            taken[m] = k
            m += 1
            if f == _FULL:
                break
            e = f
    return value[start[0] - k_min[0]], taken[:m], value


@kernel
def class_chains(classes, n_cls):
    """(each class's first job, each job's next job of its class), -1 where none."""
    first_of = np.full(n_cls, -1, np.int64)
    nxt = np.full(classes.shape[0], -1, np.int64)
    last = np.full(n_cls, -1, np.int64)
    for i in range(classes.shape[0]):
        c = classes[i]
        if first_of[c] < 0:
            first_of[c] = i
        else:
            nxt[last[c]] = i
        last[c] = i
    return first_of, nxt


@kernel
def matched(plan, ids):
    """The queue of classes ``ids`` matched in order, greedily, by a plan's queue of classes
    ``plan``: for each position of ``plan``, how many of ``ids`` come before it (the last
    entry: how many matched; an id of -1 matches nothing)."""
    before = np.zeros(plan.shape[0] + 1, np.int64)
    j = 0
    for p in range(plan.shape[0]):
        if j < ids.shape[0] and ids[j] == plan[p]:
            j += 1
        before[p + 1] = j
    return before
