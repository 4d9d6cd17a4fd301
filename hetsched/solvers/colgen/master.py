"""Dantzig-Wolfe column generation for block-angular minimization problems, on HiGHS.

The problem (what a formulation of kind ``colgen`` builds, :class:`DantzigWolfeProblem`):

    min  sum_c cost_c lambda_c
    s.t. sum_{c in block b} lambda_c = 1                 for every block b   (convexity)
         sum_c usage_{c,row} lambda_c <= capacity_row    for every row       (coupling)
         lambda_c in {0, 1}

A block's columns are all its feasible pieces (e.g. every schedule of one job); the formulation
never lists them but prices them: ``price(b, pi)`` returns min_c (cost_c + pi . usage_c) over
block b's columns, with a column attaining it (and optionally more cheap columns of b, which
the engine adds when their reduced cost is negative), for row prices pi >= 0.

The engine solves the LP relaxation by column generation with Wentges dual smoothing, keeps
the best Lagrangian bound

    L(pi) = sum_b min_{c in b} (cost_c + pi . usage_c) - pi . capacity,

which is a lower bound on the integer optimum for every pi >= 0 (relax the coupling rows with
multipliers pi), so it stays valid when the time limit cuts the loop short. Then the integer
master over the generated columns (price-and-branch) gives an incumbent. Objective values are
integer multiples of ``objective_step``, so the bound is rounded up to that grid; the result is
``optimal`` only when the incumbent meets the rounded bound. The status is never ``optimal``
otherwise, however small the gap.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import highspy
import numpy as np

from hetsched.core.errors import SolverError
from hetsched.solvers.colgen.branching import branch_and_price
from hetsched.solvers.colgen.generate import Generation, generate
from hetsched.solvers.colgen.problem import (
    Column,
    DantzigWolfeProblem,
    artificials,
    feasible,
)
from hetsched.solvers.highs_run import run_interruptibly
from hetsched.solvers.result import RawResult, SolverOptions, search_status


@dataclass
class ColgenStats:
    iterations: int = 0
    lp_value: float | None = None
    lagrangian_bound: float = -math.inf
    columns: int = 0
    cg_seconds: float = 0.0
    ip_seconds: float = 0.0
    converged: bool = False
    dive: float | None = None  # the diving heuristic's cost (None: dead end or out of time)
    nodes: int = 0  # branch-and-price nodes solved (the root counts once more)
    open_nodes: int = 0  # left open when the clock stopped the search
    fixed_blocks: int = 0  # blocks whose cost range reduced-cost fixing narrowed before branching
    prices: np.ndarray | None = (
        None  # coupling-row prices of the root's best Lagrangian bound (they certify it)
    )


@dataclass(frozen=True)
class ColgenSolution:
    """What column generation returns besides status and values: the chosen columns (one per
    block, never artificial) and how the run went."""

    columns: tuple[Column, ...]
    stats: ColgenStats


#: HiGHS's ``presolve_rule_off`` bit of presolve rule 15, probing (HiGHS 1.12 logs it as "Rule 15
#: (bit 32768): Probing"; tests/solvers/test_colgen.py checks the name against the installed HiGHS).
#: The integer master switches it off: on the master of a 24-task ladder (2,059 dense columns)
#: probing ran 5-6 s in one go, past a 1 s limit, and found no incumbent in 10 s; without it
#: HiGHS stops at the limit and has one within a second (at 30 s: 1663 against 1659 with it)
PRESOLVE_PROBING = 1 << 15


def _round_up(bound: float, step: float | None) -> float:
    if step is None or not math.isfinite(bound):
        return bound
    return math.ceil(bound / step - 1e-6) * step


class _Master:
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
        dual = np.asarray(self.h.getSolution().row_dual)
        pi = np.zeros(len(self.capacity))
        pi[self.added] = np.maximum(-dual[self.p.n_blocks :], 0.0)
        self._solved = float(self.h.getInfo().objective_function_value), pi, dual[: self.p.n_blocks]
        return self._solved

    def lambdas(self) -> np.ndarray:
        """lambda of every column in the last LP solution."""
        return np.asarray(self.h.getSolution().col_value)

    def lp_optimal(self) -> bool:
        return self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal

    def set_bounds(self, indices, lower: float, upper) -> None:
        """Bounds lower <= lambda <= upper (a number, or one per index) of the given columns."""
        k = len(indices)
        if k:
            self.h.changeColsBounds(
                k,
                np.asarray(indices, dtype=np.int32),
                np.full(k, float(lower)),
                np.broadcast_to(np.asarray(upper, dtype=float), (k,)).copy(),
            )
            self._solved = None

    def solve_ip(self, time_limit: float) -> tuple[float, np.ndarray] | None:
        """Best integer solution over the columns so far (HiGHS MIP, binary lambda), a heuristic:
        its bound is over these columns only. Presolve does not probe (``PRESOLVE_PROBING``)."""
        n = len(self.columns)
        self._solved = None
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


def _root(
    problem: DantzigWolfeProblem,
    deadline: float,
    seed: int,
    smoothing: float,
    cutoff: float = math.inf,
) -> tuple[_Master, Generation]:
    """The root's column generation: a master holding the initial columns, then the loop at
    every block's full cost range (the prices each block sees through ``problem.prepare``)."""
    master = _Master(problem, seed)
    for col in problem.initial:
        master.add(col)
    full = (-math.inf, math.inf)

    def root_prices(pi: np.ndarray):
        priced = pi if problem.prepare is None else problem.prepare(pi)
        return lambda b: (priced, *full)

    run = generate(
        master,
        problem,
        deadline,
        root_prices,
        bound=problem.lower_bound,
        smoothing=smoothing,
        cutoff=cutoff,
        round_up=lambda v: _round_up(v, problem.objective_step),
        max_rounds=problem.max_iterations,
        start=problem.initial_prices,
        auto_smoothing=problem.auto_smoothing,
        on_bound=problem.on_root_bound,
    )
    return master, run


def lp_relaxation(
    problem: DantzigWolfeProblem, time_limit: float | None = None, smoothing: float = 0.8
) -> tuple[Generation, list[Column], np.ndarray]:
    """The master LP's optimum by the column-generation loop alone (for an LP whose columns are
    the solutions of a block, not an integer program): how the loop ended (with the best
    Lagrangian bound), the columns generated and their weights in the last LP solution."""
    deadline = time.perf_counter() + (math.inf if time_limit is None else float(time_limit))
    master, run = _root(problem, deadline, 0, smoothing)
    return run, master.columns, master.lambdas()


def solve_colgen(
    problem: DantzigWolfeProblem,
    opts: SolverOptions = SolverOptions(),
    smoothing: float = 0.8,
) -> RawResult:
    """Column generation, then the integer master over the generated columns.

    ``gap``: stop when the (rounded) Lagrangian bound is within this relative gap of the
    incumbent. The result's ``solution`` is a :class:`ColgenSolution`: the chosen columns and
    the run's statistics (``problem`` is not written to).
    """
    time_limit, gap, seed = opts.time_limit, opts.gap, opts.solver_seed
    t0 = time.perf_counter()
    deadline = t0 + (float(time_limit) if time_limit is not None else math.inf)
    incumbent = sum(c.cost for c in problem.initial)
    stats = ColgenStats()
    cutoff = incumbent * (1 - gap) - 1e-9 * max(1.0, abs(incumbent))
    master, run = _root(problem, deadline, seed, smoothing, cutoff)
    stats.iterations, stats.lp_value = run.rounds, run.lp
    stats.lagrangian_bound, stats.prices = run.bound, run.prices
    # done: the LP optimum, or a bound that cannot rise further; cutoff: the bound meets the
    # incumbent (within ``gap``), nothing left to prove
    stats.converged = run.end in ("done", "cutoff")
    limited = run.end in ("time", "rounds")
    center = run.prices  # the prices of the best Lagrangian bound: reduced-cost fixing reads them
    stats.cg_seconds = time.perf_counter() - t0
    stats.columns = len(master.columns)

    chosen = None
    # an LP-guided rounding heuristic, if the formulation has one (and time is left)
    if stats.iterations and time.perf_counter() < deadline:
        got = _round_lp(master, problem, master.lambdas(), incumbent)
        if got is not None:
            incumbent, chosen = got
    # dive: fix the block whose column has the largest lambda, re-price the rest, repeat; at
    # most half of the time left, so that the integer master and branching get their turn
    now = time.perf_counter()
    if problem.dive and stats.iterations and now < deadline:
        got = _dive(master, problem, now + (deadline - now) / 2)
        stats.dive = None if got is None else got[0]
        if got is not None and got[0] < incumbent - 1e-9:
            incumbent, chosen = got
    # the integer master over the generated columns
    t_ip = time.perf_counter()
    left = deadline - t_ip
    if left > 0.05 and problem.integer_master:
        # with branching to follow, the integer master gets a quarter of what is left
        branching = problem.branch and stats.converged and gap == 0
        got = master.solve_ip(left / 4 if branching and math.isfinite(left) else min(left, 3600.0))
        if got is not None and got[0] < incumbent - 1e-9:
            incumbent, chosen = got
    stats.ip_seconds = time.perf_counter() - t_ip
    # branch-and-price while the rounded bound is below the incumbent and time is left
    root = _round_up(stats.lagrangian_bound, problem.objective_step)
    if (
        problem.branch
        and stats.converged
        and root < incumbent - 1e-9 * max(1.0, abs(incumbent))
        and time.perf_counter() < deadline
        and gap == 0
    ):
        incumbent, chosen, bstats = branch_and_price(
            master,
            problem,
            incumbent,
            chosen,
            stats.lagrangian_bound,
            deadline,
            lambda v: _round_up(v, problem.objective_step),
            center,
        )
        stats.fixed_blocks = bstats.fixed_blocks
        stats.nodes, stats.open_nodes = bstats.nodes, bstats.open_nodes
        stats.lagrangian_bound = max(stats.lagrangian_bound, min(bstats.bound, incumbent))
    if chosen is None:  # the initial columns: a feasible solution by contract
        chosen = np.zeros(len(master.columns))
        chosen[: len(problem.initial)] = 1.0
    if len(chosen) < len(master.columns):  # columns added after this solution was found are unused
        chosen = np.concatenate([chosen, np.zeros(len(master.columns) - len(chosen))])
    picked = tuple(c for c, v in zip(master.columns, chosen) if v > 0.5 and not c.artificial)

    bound = _round_up(stats.lagrangian_bound, problem.objective_step)
    bound = min(bound, incumbent)
    proven = bound >= incumbent - 1e-9 * max(1.0, abs(incumbent))
    limited = limited or time.perf_counter() >= deadline
    status = search_status(proven and problem.exact and gap == 0, limited)
    d = problem.objective_divisor
    shown = -d if problem.negated else d  # the log in the problem's own sense
    log = (
        f"colgen: {stats.iterations} iterations, {stats.columns} columns, "
        f"LP {_fmt(stats.lp_value, shown)}, "
        f"Lagrangian bound {_fmt(stats.lagrangian_bound, shown)}, CG {stats.cg_seconds:.1f}s, "
        f"dive {_fmt(stats.dive, shown)}, integer master {stats.ip_seconds:.1f}s, "
        f"branch-and-price {stats.nodes} nodes ({stats.open_nodes} open, cost ranges of "
        f"{stats.fixed_blocks} blocks narrowed by reduced costs)"
    )
    return RawResult(
        status,
        incumbent / d,
        bound / d if math.isfinite(bound) else None,
        time.perf_counter() - t0,
        log=log,
        solution=ColgenSolution(picked, stats),
    )


def _round_lp(
    master: _Master, problem: DantzigWolfeProblem, lam: np.ndarray, incumbent: float
) -> tuple[float, np.ndarray] | None:
    """The formulation's LP-guided rounding (``problem.round_lp``) of the LP solution ``lam``:
    (its cost, its lambda vector) if it is feasible and cheaper than ``incumbent``, else None.
    Its columns join the master."""
    if problem.round_lp is None:
        return None
    picked = problem.round_lp(master.columns, lam)
    if picked is None or not feasible(picked, problem):
        return None
    cost = sum(c.cost for c in picked)
    if cost >= incumbent - 1e-9:
        return None
    first = len(master.columns)
    for col in picked:
        master.add(col)
    chosen = np.zeros(len(master.columns))
    chosen[first:] = 1.0
    return cost, chosen


def _dive(
    master: _Master, problem: DantzigWolfeProblem, deadline: float, iterations_per_step: int = 25
) -> tuple[float, np.ndarray] | None:
    """Diving heuristic: repeatedly solve the master LP (pricing the free blocks, with rows the
    fixed columns exhaust priced out), then fix the free block whose column has the largest
    lambda. Returns (cost, lambda vector) of the integer solution reached, or None (dead end or
    out of time). Every column's bounds are restored afterwards."""
    residual = np.asarray(problem.capacity, dtype=float).copy()
    fixed: dict[int, int] = {}
    # the artificial columns keep every LP of the dive feasible; never fixed, off when it ends
    big, artificial = artificials(master, problem)
    touched: list[int] = []
    result = None
    try:
        while len(fixed) < problem.n_blocks:

            def dive_prices(pi_lp: np.ndarray):
                # rows the fixed columns exhaust are priced out; fixed blocks are left out
                priced_pi = pi_lp + np.where(residual <= 1e-9, big, 0.0)
                priced = priced_pi if problem.prepare is None else problem.prepare(priced_pi)
                return lambda b: None if b in fixed else (priced, -math.inf, math.inf)

            run = generate(
                master,
                problem,
                deadline,
                dive_prices,
                smoothing=0.0,
                max_rounds=iterations_per_step,
                big=big,
                dead_end="stop",
                bound_checks=False,
            )
            if run.end in ("time", "infeasible", "dead"):
                return None  # out of time, the fixings left the LP infeasible, or a block has no column left
            lam = master.lambdas()
            best_i, best_lam = -1, -1.0
            for i, col in enumerate(master.columns):
                if col.block not in fixed and not col.artificial and lam[i] > best_lam:
                    best_i, best_lam = i, lam[i]
            if best_i < 0:
                return None
            col = master.columns[best_i]
            others = [
                i for i, c in enumerate(master.columns) if c.block == col.block and i != best_i
            ]
            master.set_bounds(others, 0.0, 0.0)
            master.set_bounds([best_i], 1.0, 1.0)
            touched += others + [best_i]
            fixed[col.block] = best_i
            np.subtract.at(
                residual,
                np.asarray(col.rows, dtype=np.int64),
                1.0 if col.amounts is None else np.asarray(col.amounts, dtype=float),
            )
        picked = [master.columns[i] for i in fixed.values()]
        if feasible(picked, problem):
            x = np.zeros(len(master.columns))
            x[list(fixed.values())] = 1.0
            result = (sum(c.cost for c in picked), x)
        return result
    finally:
        master.set_bounds(
            sorted(i for i in set(touched) if not master.columns[i].artificial),
            0.0,
            highspy.kHighsInf,
        )
        master.set_bounds(artificial, 0.0, 0.0)


def _fmt(v: float | None, d: float) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v / d:.6g}"
