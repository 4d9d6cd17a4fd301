"""The restricted master LP over machine schedules (van den Akker et al. 1999, (1)-(4)):

    min  sum_s c_s lambda_s
    s.t. sum_s a_{j,s} lambda_s = 1          for every job j        (each job on one GPU, once)
         sum_{s of class k} lambda_s <= m_k   for every class k      (m_k GPUs of class k)
         lambda_s >= 0

with c_s = sum_{j in s} w_j C_j(s). One artificial column per job (cover row only) serves phase
one: a node whose branching left the LP infeasible minimizes the artificial mass, priced with
zero costs (the LP form of Farkas pricing), and is infeasible exactly when that minimum is > 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from hetsched.core.errors import SolverError
from hetsched.solvers.highs_run import run_interruptibly


@dataclass(frozen=True)
class MachineColumn:
    """One GPU's schedule: its class, its jobs in order, their end ticks, its cost in units."""

    klass: int
    jobs: np.ndarray
    ends: np.ndarray
    cost: int

    # as a column of the generic engine (:mod:`hetsched.solvers.colgen.problem`): the block is
    # the GPU class, the coupling rows are the jobs' cover rows, each used once
    artificial = False
    amounts = None

    @property
    def block(self) -> int:
        return self.klass

    @property
    def rows(self) -> np.ndarray:
        return self.jobs


class RestrictedMaster:
    """The master LP on HiGHS; columns are added, never removed; node bounds switch them off."""

    def __init__(self, n_jobs: int, machines: np.ndarray, seed: int = 0):
        self.n, self.K = n_jobs, len(machines)
        self.phase_one = False  # phase one: real columns cost 0 in the LP, artificial ones 1
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("random_seed", int(seed))
        # primal simplex: a column added keeps the basis primal feasible (measured on P2, 100 jobs:
        # 6 CPU s to the root bound against 15 s with HiGHS's default dual simplex)
        self.h.setOptionValue("simplex_strategy", 4)
        lower = np.concatenate([np.ones(n_jobs), np.zeros(self.K)])
        upper = np.concatenate([np.ones(n_jobs), np.asarray(machines, dtype=float)])
        self.h.addRows(
            n_jobs + self.K,
            lower,
            upper,
            0,
            np.zeros(1, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )
        self.columns: list[MachineColumn | None] = []  # None: the artificial column of a job
        self.costs: list[float] = []
        self.artificial = list(range(n_jobs))
        for j in range(n_jobs):  # off until phase one needs them
            self._add(0.0, np.array([j], dtype=np.int32), None, upper=0.0)
        self._keys: set[tuple] = set()

    def _add(
        self,
        cost: float,
        rows: np.ndarray,
        col: MachineColumn | None,
        upper: float = highspy.kHighsInf,
    ) -> None:
        in_lp = (
            0.0 if self.phase_one and col is not None else cost
        )  # phase one: a real column costs 0
        self.h.addCol(
            float(in_lp), 0.0, upper, len(rows), rows.astype(np.int32), np.ones(len(rows))
        )
        self.columns.append(col)
        self.costs.append(float(cost))

    def add(self, col: MachineColumn) -> bool:
        """Add a column unless the same schedule is already there; True if added."""
        key = (col.klass, col.jobs.tobytes(), col.ends.tobytes())
        if key in self._keys:
            return False
        self._keys.add(key)
        rows = np.concatenate([col.jobs, [self.n + col.klass]])
        self._add(float(col.cost), rows, col)
        return True

    def remove(self, drop: np.ndarray) -> None:
        """Delete the columns marked in ``drop`` (never an artificial one); the others keep their order."""
        drop = np.asarray(drop, dtype=bool).copy()
        drop[self.artificial] = False
        idx = np.flatnonzero(drop).astype(np.int32)
        if not len(idx):
            return
        self.h.deleteCols(len(idx), idx)
        self.columns = [c for c, d in zip(self.columns, drop) if not d]
        self.costs = [c for c, d in zip(self.costs, drop) if not d]
        self._keys = {
            (c.klass, c.jobs.tobytes(), c.ends.tobytes()) for c in self.columns if c is not None
        }

    def solve(self) -> tuple[str, float, np.ndarray, np.ndarray]:
        """(status 'optimal' or 'infeasible', LP value, pi (cover duals), sigma (class duals <= 0))."""
        self.h.run()
        status = self.h.getModelStatus()
        if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible):
            self.h.clearSolver()  # a warm start gone wrong after deleting columns: solve afresh
            self.h.run()
            status = self.h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return "infeasible", float("inf"), np.zeros(self.n), np.zeros(self.K)
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverError(
                f"machine schedules: HiGHS did not solve the master LP ({self.h.modelStatusToString(status)})"
            )
        dual = np.asarray(self.h.getSolution().row_dual)
        return (
            "optimal",
            float(self.h.getInfo().objective_function_value),
            dual[: self.n].copy(),
            np.minimum(dual[self.n :], 0.0),
        )

    def values(self) -> np.ndarray:
        return np.asarray(self.h.getSolution().col_value)

    def set_upper(self, indices: np.ndarray, upper: np.ndarray) -> None:
        k = len(indices)
        if k:
            self.h.changeColsBounds(
                k, np.asarray(indices, dtype=np.int32), np.zeros(k), np.asarray(upper, dtype=float)
            )

    def set_phase_one(self, on: bool) -> None:
        """Phase one: real columns cost 0, artificial ones 1 and enabled; off: the real costs back."""
        n = len(self.columns)
        idx = np.arange(n, dtype=np.int32)
        costs = np.zeros(n) if on else np.asarray(self.costs)
        if on:
            costs[self.artificial] = 1.0
        self.h.changeColsCost(n, idx, costs)
        art = np.asarray(self.artificial, dtype=np.int32)
        self.h.changeColsBounds(
            len(art), art, np.zeros(len(art)), np.full(len(art), highspy.kHighsInf if on else 0.0)
        )
        self.phase_one = on

    def solve_integer(
        self, allowed: np.ndarray, time_limit: float
    ) -> tuple[float, list[int]] | None:
        """The best integer solution over the allowed columns (HiGHS MIP), as (cost, column indices)."""
        n = len(self.columns)
        idx = np.arange(n, dtype=np.int32)
        self.h.changeColsIntegrality(n, idx, np.full(n, highspy.HighsVarType.kInteger))
        self.h.setOptionValue("time_limit", max(0.05, float(time_limit)))
        try:
            run_interruptibly(self.h)
            info = self.h.getInfo()
            if info.primal_solution_status != 2:
                return None
            x = np.asarray(self.h.getSolution().col_value)
            chosen = [
                i for i in range(n) if allowed[i] and x[i] > 0.5 and self.columns[i] is not None
            ]
            return float(info.objective_function_value), chosen
        finally:
            self.h.changeColsIntegrality(n, idx, np.full(n, highspy.HighsVarType.kContinuous))
            self.h.setOptionValue("time_limit", highspy.kHighsInf)
