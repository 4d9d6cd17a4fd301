"""Concrete GPUs for gangs given as (machine, type, count) cells, compiled: the placement of a
policy that decides per cell (Hadar's FIND_ALLOC), each job keeping its GPUs of last round where
they fit (a move costs a restore).

A cell's GPUs are taken in tiers: the job's own of last round, then those nobody held, then those
another job held; within a tier in index order. One call places a round's gangs, so a round costs
its gangs, not a Python loop over every GPU of every cell.

With ``classes`` (each machine's class of identical machines), the gangs' machines are first
relabelled within each class (:func:`relabel`), for a decision made on a cluster whose machines
were all free: such a decision is one up to relabelling identical machines (every gang and its
cost the same), and the relabelling that keeps the most GPUs where their jobs ran last round
spares restores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.compiled import kernel


@dataclass(frozen=True)
class CellGpus:
    """The GPUs of each (machine, type) cell in index order, as one flat array: cell c = h * R + r
    holds ``gpus[start[c]:start[c + 1]]``."""

    start: np.ndarray
    gpus: np.ndarray
    n_types: int

    @classmethod
    def of(cls, server: np.ndarray, gpu_type: np.ndarray, n_servers: int, n_types: int) -> CellGpus:
        """The cells of GPUs g on ``server[g]`` of type ``gpu_type[g]``."""
        cell = np.asarray(server, np.int64) * n_types + np.asarray(gpu_type, np.int64)
        order = np.argsort(cell, kind="stable").astype(np.int64)  # by cell, then by index
        counts = np.bincount(cell, minlength=n_servers * n_types)
        start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(start, order, n_types)

    def place(
        self,
        jobs: np.ndarray,
        count: np.ndarray,
        triples: np.ndarray,
        held: dict[int, tuple[int, ...]],
        classes: np.ndarray | None = None,
    ) -> dict[int, tuple[int, ...]]:
        """Job ``jobs[p]`` takes ``triples[s_p : s_p + count[p]]`` ((machine, type, count) rows,
        ``s_p`` the sum of the counts before p), the jobs in increasing index; ``held``: each
        job's GPUs of last round; ``classes``: relabel identical machines first (module doc).
        Returns job -> its GPUs."""
        owner = [-1] * self.gpus.shape[0]  # a list, then one array: 5 times faster
        for j, gs in held.items():
            for g in gs:
                owner[g] = j
        owners = np.array(owner, np.int64)
        triples = np.asarray(triples, np.int64).reshape(-1, 3)
        if classes is not None and len(triples):
            jobs = np.asarray(jobs, np.int64)
            count = np.asarray(count, np.int64)
            triples = relabel(
                jobs, count, triples, owners, self.start, self.gpus, self.n_types, classes
            )
        out, ends, by_job = place(
            np.asarray(jobs, np.int64),
            np.asarray(count, np.int64),
            triples,
            owners,
            self.start,
            self.gpus,
            self.n_types,
        )
        flat, job_of = out.tolist(), np.asarray(jobs).tolist()
        plan: dict[int, tuple[int, ...]] = {}
        at = 0
        for p, end in zip(by_job.tolist(), ends.tolist()):
            plan[job_of[p]] = tuple(flat[at:end])
            at = end
        return plan


@kernel
def place(jobs, count, triples, owner, start, gpus, R):
    """The GPUs of each job in increasing index, job ``jobs[p]`` taking its ``count[p]`` rows
    of ``triples`` from the GPUs the jobs before it left: (the GPUs, each job's end in them,
    the positions p in that order)."""
    by_job = np.argsort(jobs)
    first = np.zeros(jobs.shape[0] + 1, np.int64)
    for p in range(jobs.shape[0]):
        first[p + 1] = first[p] + count[p]
    taken = np.zeros(gpus.shape[0], np.bool_)
    total = 0
    for t in range(triples.shape[0]):
        total += triples[t, 2]
    out = np.empty(total, np.int64)
    ends = np.empty(by_job.shape[0], np.int64)
    m = 0
    for k in range(by_job.shape[0]):
        p = by_job[k]
        j = jobs[p]
        for t in range(first[p], first[p + 1]):
            cell = triples[t, 0] * R + triples[t, 1]
            want = triples[t, 2]
            got = 0
            for tier in range(3):  # its own, nobody's, another's
                for s in range(start[cell], start[cell + 1]):
                    if got == want:
                        break
                    g = gpus[s]
                    if taken[g]:
                        continue
                    o = owner[g]
                    if (0 if o == j else (1 if o < 0 else 2)) == tier:
                        taken[g] = True
                        out[m] = g
                        m += 1
                        got += 1
        ends[k] = m
    return out[:m], ends, by_job


@kernel
def relabel(jobs, count, triples, owner, start, gpus, R, classes):
    """``triples`` with their machines relabelled within each class of ``classes``: greedily,
    the pair (machine in the triples, real machine) of the most GPUs whose job held them there
    last round first (ties: a machine kept as it is, then the lower indices), until every
    machine of a class has its label."""
    H = classes.shape[0]
    gain = np.zeros((H, H), np.int64)
    p = 0
    left = count[0] if count.shape[0] else 0
    for t in range(triples.shape[0]):
        while left == 0:  # the job of triple t
            p += 1
            left = count[p]
        left -= 1
        j, hv, r, n = jobs[p], triples[t, 0], triples[t, 1], triples[t, 2]
        for hr in range(H):
            if classes[hr] != classes[hv]:
                continue
            cell = hr * R + r
            mine = 0
            for s in range(start[cell], start[cell + 1]):
                if owner[gpus[s]] == j:
                    mine += 1
            gain[hv, hr] += mine if mine < n else n
    to = np.full(H, -1, np.int64)
    used = np.zeros(H, np.bool_)
    # the pairs of positive gain, in scan order (machine in the triples, then real machine):
    # the greedy's steps while the best gain left is positive scan these alone
    pair = np.empty((H * H, 2), np.int64)
    n_pairs = 0
    for hv in range(H):
        for hr in range(H):
            if gain[hv, hr] > 0:  # the same class: no other pair gains
                pair[n_pairs, 0], pair[n_pairs, 1] = hv, hr
                n_pairs += 1
    while True:
        best, bq = 0, -1
        for q in range(n_pairs):
            hv, hr = pair[q, 0], pair[q, 1]
            if to[hv] >= 0 or used[hr]:
                continue
            g = gain[hv, hr]
            if g > best or (g == best and hr == hv and pair[bq, 0] != pair[bq, 1]):
                best, bq = g, q
        if bq < 0:
            break
        to[pair[bq, 0]] = pair[bq, 1]
        used[pair[bq, 1]] = True
    # every gain left is 0: the machines whose own label is free keep it, then each machine
    # left (in index order) takes the first free label of its class
    for h in range(H):
        if to[h] < 0 and not used[h]:
            to[h] = h
            used[h] = True
    for hv in range(H):
        if to[hv] >= 0:
            continue
        for hr in range(H):
            if not used[hr] and classes[hr] == classes[hv]:
                to[hv] = hr
                used[hr] = True
                break
    out = triples.copy()
    for t in range(triples.shape[0]):
        out[t, 0] = to[triples[t, 0]]
    return out
