"""What DP_allocation's arrays read of each job that does not change from slot to slot, worked
out once: its gang size W_j, throughputs X_j^r and usable types fastest first (Algorithm 2, line
23), its class for the DP (:meth:`hetsched.hadar.slot_arrays.SlotArrays.classes`), its utility's
numerator (:func:`hetsched.hadar.utility.numerators`) and its terms of the price function (6)-(7)
(:func:`hetsched.hadar.price.price_terms`).

A slot's arrays index the table by the queue's jobs (:meth:`JobTable.at`): an online run builds
one table for the whole trace and a new queue costs its jobs, not their utilities and classes
again. Every entry is the elementwise arithmetic the slot's arrays did over the queue, so the
arrays are the same to the bit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.hadar.arrays import HadarView
from hetsched.hadar.price import price_terms
from hetsched.hadar.utility import numerators


@dataclass(frozen=True)
class JobTable:
    """Per-job rows of a view for one utility; row p is job ``jobs[p]`` (``jobs`` None: row p is
    job p, every job of the view)."""

    view: HadarView
    utility_name: str | None
    jobs: np.ndarray | None
    need: np.ndarray  # W_j
    thr: np.ndarray  # X_j^r
    order: np.ndarray  # [p, :n_order[p]] usable types, fastest first; -1 after
    n_order: np.ndarray
    numer: np.ndarray  # U_j(d) * d
    arrival: np.ndarray  # a_j (slots), as floats
    class_id: np.ndarray  # the class rows' ranks in lexicographic order (equal rows, equal id)
    u_max_term: np.ndarray  # U_j(t_j^min) / W_j, (6)
    u_min_term: np.ndarray  # U_j(T - a_j) / (t_j^max W_j), (7) before its 1 / (4 eta)

    @classmethod
    def of(
        cls, view: HadarView, utility_name: str | None = None, jobs: list[int] | None = None
    ) -> JobTable:
        """The rows of ``jobs`` (default: every job of the view)."""
        idx = np.arange(view.n_jobs) if jobs is None else np.asarray(jobs, dtype=np.int64)
        n, n_types = len(idx), view.capacity.shape[1]
        need = view.workers[idx].astype(np.int64) if n else np.zeros(0, np.int64)
        thr = view.throughput[idx].astype(float) if n else np.zeros((0, n_types))
        # usable types fastest first (a stable sort puts the types of no throughput last)
        order = np.argsort(-thr, axis=1, kind="stable").astype(np.int64)
        n_order = (thr > 0).sum(axis=1).astype(np.int64)
        order[np.arange(n_types) >= n_order[:, None]] = -1
        rows = class_rows(order, thr, need)
        if n:
            class_id = np.unique(rows, axis=0, return_inverse=True)[1]
        else:
            class_id = np.zeros(0, np.int64)
        u_max_term, u_min_term = price_terms(view, idx, utility_name)
        return cls(
            view,
            utility_name,
            None if jobs is None else idx,
            need,
            thr,
            order,
            n_order,
            numerators(view, utility_name, idx),
            view.arrival[idx].astype(float),
            np.asarray(class_id, dtype=np.int64).ravel(),
            u_max_term,
            u_min_term,
        )

    def at(self, queue: list[int]) -> np.ndarray:
        """The rows of the jobs of ``queue``, in its order."""
        if self.jobs is None:
            return np.asarray(queue, dtype=np.int64)
        where = {j: p for p, j in enumerate(self.jobs.tolist())}
        return np.array([where[j] for j in queue], dtype=np.int64)


def class_rows(order: np.ndarray, thr: np.ndarray, need: np.ndarray) -> np.ndarray:
    """What makes a job's class: [i] its type order, the ties in throughput between consecutive
    types of it (a gang's slowest type is the first of the least throughput), W_i."""
    n = len(need)
    at = thr[np.arange(n)[:, None], np.maximum(order, 0)]
    ties = (at[:, 1:] == at[:, :-1]) & (order[:, 1:] >= 0)
    return np.column_stack([order, ties, need])
