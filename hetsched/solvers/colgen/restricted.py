"""The restricted master LP of column generation on HiGHS (:mod:`hetsched.solvers.colgen.master`):
grown a column at a time, re-solved from its last basis, and shrunk when it holds too many."""

from __future__ import annotations

from typing import Callable

import highspy
import numpy as np

from hetsched.core.errors import SolverError
from hetsched.solvers.colgen.problem import Column, DantzigWolfeProblem
from hetsched.solvers.highs_run import run_interruptibly

#: HiGHS's ``presolve_rule_off`` bit of presolve rule 15, probing (HiGHS 1.12 logs it as "Rule 15
#: (bit 32768): Probing"; tests/solvers/test_colgen.py checks the name against the installed HiGHS).
#: The integer master switches it off: on the master of a 24-task ladder (2,059 dense columns)
#: probing ran 5-6 s in one go, past a 1 s limit, and found no incumbent in 10 s; without it
#: HiGHS stops at the limit and has one within a second (at 30 s: 1663 against 1659 with it)
PRESOLVE_PROBING = 1 << 15


#: the master starts deleting columns once it holds more than its rows and more than this many:
#: an iteration of the simplex prices every column, and the master is degenerate (hundreds of
#: iterations a re-solve on the ladders), so its re-solves slow down as columns pile up
PURGE_MIN = 500


class RestrictedMaster:
    """The restricted master on HiGHS, grown a column at a time.

    A coupling row enters HiGHS with the first column that uses it: a row no column uses is
    0 <= capacity, satisfied, and its price 0 at every optimum, so the LP is the same. On the
    ladders most of the time-indexed rows are such (``ladder(32, 4)``: 926 of 3,000 ever used
    by a column after the root), and the simplex's work per iteration grows with the rows it
    carries."""

    def __init__(self, problem: DantzigWolfeProblem, seed: int):
        self.p = problem
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("random_seed", int(seed))
        if problem.lp_tolerance is not None:
            for option in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
                self.h.setOptionValue(option, float(problem.lp_tolerance))
        # no "threads": HiGHS fixes its thread pool once per process, and a later Highs object
        # asking for another size fails every run (the master LP is a serial simplex anyway)
        nb = problem.n_blocks
        self.capacity = np.asarray(problem.capacity, dtype=float)
        self.h.addRows(
            nb,
            np.ones(nb),
            np.ones(nb),
            0,
            np.zeros(1, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )
        # HiGHS's row of each coupling row (-1: not added yet), and the coupling rows in
        # HiGHS's order after the convexity rows
        self.row_at = np.full(len(self.capacity), -1, dtype=np.int64)
        self.added: list[int] = []
        # a row of negative capacity fails 0 <= capacity even unused: it is never left out
        short = np.flatnonzero(self.capacity < 0)
        if len(short):
            self._add_rows(short)
        self.columns: list[Column] = []
        self.upper: list[float] = []  # each column's upper bound in HiGHS
        self.priced = 0  # the columns that the last LP solution has a reduced cost for
        self.purged = 0  # columns deleted so far (``shrink``)
        self._solved: tuple[float, np.ndarray, np.ndarray] | None = (
            None  # the LP unchanged since its last solve
        )

    def _add_rows(self, rows: np.ndarray) -> None:
        """Coupling rows ``rows`` (none added yet) into HiGHS, empty: no column before uses them."""
        k = len(rows)
        self.row_at[rows] = self.p.n_blocks + len(self.added) + np.arange(k)
        self.added.extend(rows.tolist())
        self.h.addRows(
            k,
            np.full(k, -highspy.kHighsInf),
            self.capacity[rows],
            0,
            np.zeros(k + 1, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )

    def add(self, col: Column) -> None:
        rows = np.asarray(col.rows, dtype=np.int64)
        new = rows[self.row_at[rows] < 0]
        if len(new):
            self._add_rows(np.unique(new))
        idx = np.concatenate([[col.block], self.row_at[rows]]).astype(np.int32)
        amounts = (
            np.ones(len(rows)) if col.amounts is None else np.asarray(col.amounts, dtype=float)
        )
        vals = np.concatenate([[1.0], amounts])
        self.h.addCol(float(col.cost), 0.0, highspy.kHighsInf, len(idx), idx, vals)
        self.columns.append(col)
        self.upper.append(highspy.kHighsInf)
        self._solved = None

    def solve_lp(self) -> tuple[float, np.ndarray, np.ndarray]:
        """LP value, the row prices pi >= 0 of the coupling rows and the convexity duals mu
        (HiGHS runs only if a column or bound changed since the last solve)."""
        if self._solved is not None:
            return self._solved
        status = self.h.run()
        if status == highspy.HighsStatus.kError or not self.lp_optimal():
            raise SolverError(
                f"colgen: HiGHS did not solve the master LP ({self.h.modelStatusToString(self.h.getModelStatus())})"
            )
        self.priced = len(self.columns)
        dual = np.asarray(self.h.getSolution().row_dual)
        pi = np.zeros(len(self.capacity))
        pi[self.added] = np.maximum(-dual[self.p.n_blocks :], 0.0)
        self._solved = float(self.h.getInfo().objective_function_value), pi, dual[: self.p.n_blocks]
        return self._solved

    def purge(self, drop: np.ndarray) -> np.ndarray:
        """Delete the columns ``drop`` from the master (HiGHS and ``columns``); each old column's
        new index (-1: deleted). Columns basic in HiGHS's last basis are kept whatever ``drop``
        says, so the basis stays valid and the next solve starts from it."""
        n = len(self.columns)
        keep = np.ones(n, dtype=bool)
        keep[np.asarray(drop, dtype=np.int64)] = False
        basis = self.h.getBasis()
        if basis.valid:
            status = np.asarray([int(s) for s in basis.col_status[:n]], dtype=np.int64)
            keep[: len(status)] |= status == int(highspy.HighsBasisStatus.kBasic)
        where = np.full(n, -1, dtype=np.int64)
        where[keep] = np.arange(int(keep.sum()))
        gone = np.flatnonzero(~keep).astype(np.int32)
        if len(gone):
            self.h.deleteCols(len(gone), gone)
            self.columns = [c for c, k in zip(self.columns, keep) if k]
            self.upper = [u for u, k in zip(self.upper, keep) if k]
            self.priced = int(keep[: self.priced].sum())
            self.purged += len(gone)
            self._solved = None
        return where

    def shrink(self, protect: Callable[[Column], bool]) -> None:
        """Past ``above`` columns (the master's rows, at least :data:`PURGE_MIN`), delete those
        of largest reduced cost in the last LP solution until ``above // 2`` are left: never an
        artificial column, one the LP has not priced yet, a basic one (``purge``) or one that
        ``protect`` names. A deleted column that is needed again is priced again: pricing never
        depends on what the master holds, so every Lagrangian bound stays what it was."""
        n = len(self.columns)
        above = max(PURGE_MIN, self.h.getNumRow())
        if n <= above or self.priced == 0:
            return
        keep = np.array([c.artificial or protect(c) for c in self.columns], dtype=bool)
        keep[self.priced :] = True
        rc = np.asarray(self.h.getSolution().col_dual)[: self.priced]
        order = np.argsort(-rc, kind="stable")  # largest reduced cost first
        free = order[~keep[order]]
        excess = n - above // 2
        self.purge(free[: max(0, excess)])

    def lambdas(self) -> np.ndarray:
        """lambda of every column in the last LP solution."""
        return np.asarray(self.h.getSolution().col_value)

    def lp_optimal(self) -> bool:
        return self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal

    def set_bounds(self, indices, lower: float, upper) -> None:
        """Bounds lower <= lambda <= upper (a number, or one per index) of the given columns."""
        k = len(indices)
        if k:
            idx = np.asarray(indices, dtype=np.int32)
            hi = np.broadcast_to(np.asarray(upper, dtype=float), (k,)).copy()
            self.h.changeColsBounds(k, idx, np.full(k, float(lower)), hi)
            for i, u in zip(idx.tolist(), hi.tolist()):
                self.upper[i] = u
            self._solved = None

    def solve_ip(self, time_limit: float) -> tuple[float, np.ndarray] | None:
        """Best integer solution over the columns so far (HiGHS MIP, binary lambda), a heuristic:
        its bound is over these columns only. Presolve does not probe (``PRESOLVE_PROBING``)."""
        n = len(self.columns)
        self._solved = None
        self.priced = 0  # the MIP leaves no reduced costs: ``shrink`` waits for the next LP
        self.h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger)
        )
        self.h.setOptionValue("time_limit", max(0.1, float(time_limit)))
        self.h.setOptionValue("presolve_rule_off", PRESOLVE_PROBING)
        run_interruptibly(self.h)
        info = self.h.getInfo()
        x = np.asarray(self.h.getSolution().col_value)
        ok = info.primal_solution_status == 2  # kSolutionStatusFeasible
        self.h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kContinuous)
        )
        self.h.setOptionValue("time_limit", highspy.kHighsInf)
        self.h.setOptionValue("presolve_rule_off", 0)
        return (float(info.objective_function_value), x) if ok else None
