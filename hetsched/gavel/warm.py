"""Gavel's max-min allocation LP kept in one HiGHS object across a simulation, changed by the
jobs that come and go, and re-solved warm (issue 41, item 1).

Between two solves of a simulated Gavel the active set changes by a few jobs. The LP over the
active jobs J (:mod:`hetsched.gavel.fast`; Gavel OSDI'20, Sec. 4.1)

    max z  s.t.  fair[j]:  b_j . x_j - z >= 0,   share[j]:  sum_r x_{j,r} <= 1,
                 cap[r]:   sum_j s_j x_{j,r} <= N_r,   x >= 0

is kept in one highspy object: a job that leaves takes its columns and its two rows out, a job
that arrives adds them, and HiGHS's dual simplex starts from the basis of the last solve. The
rows b_j need not change: the policy's coefficients a_j = b_j / f share the factor f of the
equal share (X^equal = f N_r / sum N with f = min(1, sum N / sum_J s), the same for every job),
and scaling every fair row by one positive constant scales z and leaves the optimal set of x
alone. The result is a vertex of the same optimal set as a cold solve, not always the same
vertex. Each allocation is checked by the same validator as the cold solves (the caller's).
"""

from __future__ import annotations

import highspy
import numpy as np

INF = highspy.kHighsInf


class WarmMaxMin:
    """``solve(jobs, b, scale)``: x of the LP above over ``jobs`` (ids in any order), with the
    rows ``b`` and gang sizes ``scale`` of each (only a new job's are read); None when HiGHS
    does not end optimal (the caller solves cold)."""

    def __init__(self, count: np.ndarray):
        self.k = len(count)
        self.order: list[int] = []  # jobs in column order: job p owns columns 1 + p k .. + k
        self.h = highspy.Highs()
        for key, value in (("output_flag", False), ("solver", "simplex"), ("presolve", "off")):
            self.h.setOptionValue(key, value)
        self.h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h.addCol(1.0, -INF, INF, 0, np.array([], dtype=np.int32), np.array([]))  # z
        for r in range(self.k):  # cap[r], rows 0 .. k-1
            self.h.addRow(-INF, float(count[r]), 0, np.array([], dtype=np.int32), np.array([]))

    def _remove(self, gone: set[int]) -> None:
        k, keep, cols, rows = self.k, [], [], []
        for p, j in enumerate(self.order):
            if j in gone:
                cols += range(1 + p * k, 1 + (p + 1) * k)
                rows += (k + 2 * p, k + 2 * p + 1)
            else:
                keep.append(j)
        self.h.deleteCols(len(cols), np.array(cols, dtype=np.int32))
        self.h.deleteRows(len(rows), np.array(rows, dtype=np.int32))
        self.order = keep

    def _add(self, new: list[int], b: dict[int, np.ndarray], scale: dict[int, float]) -> None:
        k = self.k
        for j in new:
            first = self.h.getNumCol()
            # the job's k columns, each with its gang size in cap[r]
            self.h.addCols(
                k,
                np.zeros(k),
                np.zeros(k),
                np.full(k, INF),
                k,
                np.arange(k, dtype=np.int32),
                np.arange(k, dtype=np.int32),
                np.full(k, float(scale[j])),
            )
            cols = np.arange(first, first + k, dtype=np.int32)
            # fair[j]: b_j . x_j - z >= 0, then share[j]: sum_r x_{j,r} <= 1
            self.h.addRows(
                2,
                np.array([0.0, -INF]),
                np.array([INF, 1.0]),
                2 * k + 1,
                np.array([0, k + 1], dtype=np.int32),
                np.concatenate([cols, [0], cols]).astype(np.int32),
                np.concatenate([b[j], [-1.0], np.ones(k)]),
            )
            self.order.append(j)

    def solve(
        self, jobs: list[int], b: dict[int, np.ndarray], scale: dict[int, float]
    ) -> np.ndarray | None:
        """x[i, r] for ``jobs[i]``, or None."""
        now = set(jobs)
        gone = {j for j in self.order if j not in now}
        if gone:
            self._remove(gone)
        known = set(self.order)
        self._add([j for j in jobs if j not in known], b, scale)
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        values = np.asarray(self.h.getSolution().col_value)[1:].reshape(-1, self.k)
        at = {j: p for p, j in enumerate(self.order)}
        return np.clip(values[[at[j] for j in jobs]], 0.0, None)
