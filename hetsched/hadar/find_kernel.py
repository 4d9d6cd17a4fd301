"""FIND_ALLOC compiled (Hadar's Algorithm 2, lines 22-34), for the searches of
:mod:`hetsched.hadar.bnb_kernel` and :mod:`hetsched.hadar.dp_kernel`: a job's candidate gang at
a vector of free GPUs (:func:`find`), the gang itself (:func:`fill`, :func:`apply`) and the gangs
of a choice replayed (:func:`replay`), on the slot's arrays (the arrays are described in
:mod:`hetsched.hadar.bnb_kernel`).

Identical machines (the same capacity class) are visited most free first: the searches keep
every vector of free GPUs *canonical* (:func:`canon`: within each class, the machines' rows in
descending lexicographic order, in the class's index positions), and FIND_ALLOC visits a
canonical vector's machines in index order. That order depends on the machines' states, not
their names, so FIND_ALLOC's gang at a vector and at the same vector with identical machines
relabelled are the same up to the relabelling, and so are the DP's values there: a search keeps
one vector per class of relabellings (on ``gavel-poisson``'s cluster of 5 identical machines
per type, a third of the vectors; issue 41). The paper's FIND_ALLOC leaves the order of the
machines open.

FIND_ALLOC here returns the candidate of the literal
:func:`hetsched.hadar.dp_allocation.find_alloc`, ties included (the tests compare the two on
every state of whole searches). The literal one builds every gang for every q (the q fastest
types); here each machine and the spread yield one gang, at the first q whose types hold W_j
free GPUs (the fill stops there, so larger q repeat it), and only the first machine of each
(capacity, free GPUs) state is priced (later ones tie with it and lose the tie). The gangs are
taken in the literal order (q ascending; within q, machines in index order, then the spread
gang); the least cost wins, and among the gangs at that cost the first of largest payoff (with
``min_cost`` false, the first of largest payoff among all). Every float is computed in the same
order as there.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel


@kernel
def fill(h, i, free, order, n_order, need, R, H, thr, out_h, out_r, out_n):
    """The gang of ``need`` GPUs taken type by type (job i's fastest first) on machine h, or over
    all machines in index order when h == H. Returns (q, entries, slowest type); q = 0: none."""
    left = need
    k = 0
    slow = -1
    for qi in range(n_order[i]):
        r = order[i, qi]
        lo = h if h < H else 0
        hi = h + 1 if h < H else H
        for m in range(lo, hi):
            c = free[m * R + r]
            take = left if left < c else c
            if take > 0:
                out_h[k] = m
                out_r[k] = r
                out_n[k] = take
                k += 1
                left -= take
                if slow < 0 or thr[i, r] < thr[i, slow]:
                    slow = r
            if left == 0:
                return qi + 1, k, slow
    return 0, 0, -1


@kernel
def find(i, free, job, scratch):
    """FIND_ALLOC (Algorithm 2, lines 22-34) for job i at ``free``: (payoff, h) of its candidate,
    h the machine of a consolidated gang or H for the spread gang (:func:`fill` rebuilds it);
    payoff <= 0 means no candidate (line 29), h < 0 that no gang fits. Two machines are in the
    same state when they have the same capacity class ``mclass`` and the same free GPUs
    (``base``: one more than the largest cell). ``job``: the slot's arrays
    (:meth:`hetsched.hadar.slot_arrays.SlotArrays.find_args`); ``scratch``: those of
    :func:`scratch`."""
    cap, mclass, base, _, _, need, _, util, _, comm_cost, min_cost = job
    gh, gr, gn, gang_q, gang_cost, gang_slow, gang_code = scratch[:7]
    memo_row, memo_q, memo_cost, memo_slow = scratch[7:]
    H, R = cap.shape
    nd = need[i]
    # one gang per machine (the first of each state) and the spread gang
    for h in range(H):  # a machine's state: its capacity class and its free GPUs
        code = mclass[h]
        for r in range(R):
            code = code * base + free[h * R + r]
        gang_code[h] = code
    row = memo_row[i] if i < memo_row.shape[0] else -1  # -1: no memo (:func:`scratch`)
    for h in range(H + 1):
        gang_q[h] = 0
        if h < H and row >= 0:
            # a consolidated gang depends on the machine's state and the job's class alone
            # (its prices on the cell's capacity): remembered per (state, class), so a machine
            # in a state met before costs a lookup; a later machine in the same state then ties
            # with the first and loses the tie, as if skipped
            at = gang_code[h]
            if memo_q[at, row] < 0:
                q, _, slow, cost = _priced(h, i, free, job, gh, gr, gn)
                memo_q[at, row], memo_cost[at, row], memo_slow[at, row] = q, cost, slow
            gang_q[h] = memo_q[at, row]
            gang_cost[h] = memo_cost[at, row]
            gang_slow[h] = memo_slow[at, row]
            continue
        if h < H:
            dup = False
            for h2 in range(h):
                if gang_code[h2] == gang_code[h] and mclass[h2] == mclass[h]:
                    dup = True  # the code is a filter; the rows decide (it may wrap)
                    for r in range(R):
                        if free[h2 * R + r] != free[h * R + r]:
                            dup = False
                            break
                    if dup:
                        break
            if dup:
                continue
        q, k, slow, cost = _priced(h, i, free, job, gh, gr, gn)
        if q == 0:
            continue
        if h == H:
            used = 0
            for e in range(k):  # machines used (entries come type by type: count distinct)
                seen = False
                for e2 in range(e):
                    if gh[e2] == gh[e]:
                        seen = True
                        break
                if not seen:
                    used += 1
            cost += comm_cost * (used - 1) * nd
        gang_q[h] = q
        gang_cost[h] = cost
        gang_slow[h] = slow
    least = np.inf
    for h in range(H + 1):
        if gang_q[h] > 0 and gang_cost[h] < least:
            least = gang_cost[h]
    best_h = -1
    best_payoff = -np.inf
    for q in range(1, R + 1):  # the literal order: q ascending, machines, then the spread
        for h in range(H + 1):
            if gang_q[h] != q or (min_cost and gang_cost[h] != least):
                continue
            payoff = util[i, gang_slow[h]] - gang_cost[h]
            if best_h < 0 or payoff > best_payoff:
                best_h, best_payoff = h, payoff
    if best_h < 0:
        return -np.inf, -1
    return best_payoff, best_h


@kernel
def _priced(h, i, free, job, gh, gr, gn):
    """Job i's gang on machine h (H: the spread gang; :func:`fill`, into ``gh``, ``gr``, ``gn``)
    and its cost at the current prices (line 26), the communication cost apart: (q, entries,
    slowest type, cost)."""
    cap, order, n_order, need, thr, price = job[0], job[3], job[4], job[5], job[6], job[8]
    H, R = cap.shape
    q, k, slow = fill(h, i, free, order, n_order, need[i], R, H, thr, gh, gr, gn)
    cost = 0.0
    for e in range(k):
        hh, rr = gh[e], gr[e]
        cost += price[hh, rr, cap[hh, rr] - free[hh * R + rr]] * gn[e]
    return q, k, slow, cost


@kernel
def canon(free, mclass, R, perm):
    """Make ``free`` canonical in place (module doc): within each capacity class of ``mclass``,
    the machines' rows sorted most free first (lexicographically, descending), in the positions
    the class has. ``perm`` (position -> real machine; empty: not kept) is permuted alike, and
    equal rows are then in the order of their real machines (so the result is
    :func:`hetsched.hadar.dp_allocation.canonical_order`'s for the real vector)."""
    H = mclass.shape[0]
    track = perm.shape[0] > 0
    for h in range(1, H):
        c = mclass[h]
        g = h
        while True:
            p = g - 1
            while p >= 0 and mclass[p] != c:
                p -= 1
            if p < 0:
                break
            greater = False  # row g before row p?
            tie = True
            for r in range(R):
                a, b = free[g * R + r], free[p * R + r]
                if a != b:
                    greater, tie = a > b, False
                    break
            if tie and track:
                greater = perm[g] < perm[p]
            if not greater:
                break
            for r in range(R):
                free[g * R + r], free[p * R + r] = free[p * R + r], free[g * R + r]
            if track:
                perm[g], perm[p] = perm[p], perm[g]
            g = p


@kernel
def scratch(H, R, memo_row=np.empty(0, np.int64), n_codes=0):
    """The work arrays of :func:`find`: a gang's (machine, type, count) entries, per gang
    (machine, or H for the spread) its q, cost, slowest type and machine state code, and a
    memo of the consolidated gangs (q, cost, slowest type; q -1: not yet found) of each of the
    ``n_codes`` machine states (:func:`memo_codes`; 0: no memo) and each memo row, queue
    position i's row being ``memo_row[i]`` (-1: none). Jobs of one class (the same type order,
    ties and gang size) get the same consolidated gangs, so a caller whose arrays stay the same
    over many calls (:func:`hetsched.hadar.dp_kernel.sweep`) gives a class one row."""
    rows = 0
    for i in range(memo_row.shape[0]):
        rows = max(rows, memo_row[i] + 1)
    if n_codes == 0 or rows == 0:
        n_codes, rows = 0, 0
    return (
        np.empty(H * R + 1, np.int64),
        np.empty(H * R + 1, np.int64),
        np.empty(H * R + 1, np.int64),
        np.zeros(H + 1, np.int64),
        np.zeros(H + 1, np.float64),
        np.zeros(H + 1, np.int64),
        np.zeros(H + 1, np.int64),
        memo_row if rows > 0 else np.empty(0, np.int64),
        np.full((n_codes, rows), -1, np.int64),
        np.zeros((n_codes, rows), np.float64),
        np.zeros((n_codes, rows), np.int64),
    )


#: the most entries a memo of :func:`scratch` may have (machine states x rows): 24 MB
MEMO_ENTRIES = 1 << 20


@kernel
def memo_codes(mclass, base, R, n_rows):
    """How many machine state codes :func:`find` can meet (capacity classes x base^R), or 0
    if a memo of them with ``n_rows`` rows would pass ``MEMO_ENTRIES`` (the codes then may
    wrap, and :func:`find` goes without)."""
    n = 1
    for h in range(mclass.shape[0]):
        n = max(n, mclass[h] + 1)
    for _ in range(R):
        n *= base
        if n * max(n_rows, 1) > MEMO_ENTRIES:
            return 0
    return n


@kernel
def apply(h, i, free, job, scratch):
    """Take job i's gang ending at ``h`` (from :func:`find`) out of the canonical ``free``, and
    make what it leaves canonical again (:func:`canon`)."""
    cap, mclass, _, order, n_order, need, thr = job[:7]
    H, R = cap.shape
    gh, gr, gn = scratch[0], scratch[1], scratch[2]
    _, k, _ = fill(h, i, free, order, n_order, need[i], R, H, thr, gh, gr, gn)
    for e in range(k):
        free[gh[e] * R + gr[e]] -= gn[e]
    canon(free, mclass, R, np.empty(0, np.int64))


@kernel
def replay(taken, free, job, scratch):
    """The gangs of the jobs at queue positions ``taken`` (in order), each found by
    :func:`find` at the free GPUs the ones before it leave, made canonical (:func:`canon`), its
    machines named as in ``free`` (which is updated): (payoff, cost
    and number of (machine, type, count) triples of each, the triples in order). A position
    with no candidate there has payoff <= 0 and no triples."""
    cap, mclass, order, n_order, need, thr = job[0], job[1], job[3], job[4], job[5], job[6]
    H, R = cap.shape
    gh, gr, gn, gang_cost = scratch[0], scratch[1], scratch[2], scratch[4]
    m = taken.shape[0]
    # the gangs are found on the canonical vector (module doc), their machines named by ``perm``
    perm = np.arange(H)
    work = free.copy()
    canon(work, mclass, R, perm)
    payoff = np.zeros(m)
    cost = np.zeros(m)
    count = np.zeros(m, np.int64)
    triples = np.empty((m * H * R, 3), np.int64)
    t = 0
    for p in range(m):
        i = taken[p]
        value, h = find(i, work, job, scratch)
        if h < 0 or value <= 0.0:
            payoff[p] = min(value, 0.0)
            continue
        payoff[p] = value
        cost[p] = gang_cost[h]
        _, k, _ = fill(h, i, work, order, n_order, need[i], R, H, thr, gh, gr, gn)
        for e in range(k):
            triples[t, 0] = perm[gh[e]]
            triples[t, 1] = gr[e]
            triples[t, 2] = gn[e]
            work[gh[e] * R + gr[e]] -= gn[e]
            free[perm[gh[e]] * R + gr[e]] -= gn[e]
            t += 1
        count[p] = k
        canon(work, mclass, R, perm)
    return payoff, cost, count, triples[:t]
