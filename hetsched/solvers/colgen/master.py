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

from hetsched.solvers.colgen.branching import branch_and_price
from hetsched.solvers.colgen.generate import Generation, generate
from hetsched.solvers.colgen.problem import (
    Column,
    DantzigWolfeProblem,
    artificials,
    feasible,
)
from hetsched.solvers.colgen.restricted import RestrictedMaster
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
    purged: int = 0  # columns deleted from the master as it grew (root and nodes)
    strong_lps: int = 0  # LPs branch-and-price solved to compare cost splits
    prices: np.ndarray | None = (
        None  # coupling-row prices of the root's best Lagrangian bound (they certify it)
    )


@dataclass(frozen=True)
class ColgenSolution:
    """What column generation returns besides status and values: the chosen columns (one per
    block, never artificial) and how the run went."""

    columns: tuple[Column, ...]
    stats: ColgenStats


def _round_up(bound: float, step: float | None) -> float:
    if step is None or not math.isfinite(bound):
        return bound
    return math.ceil(bound / step - 1e-6) * step


def _root(
    problem: DantzigWolfeProblem,
    deadline: float,
    seed: int,
    smoothing: float,
    cutoff: float = math.inf,
) -> tuple[RestrictedMaster, Generation]:
    """The root's column generation: a master holding the initial columns, then the loop at
    every block's full cost range (the prices each block sees through ``problem.prepare``)."""
    master = RestrictedMaster(problem, seed)
    for col in problem.initial:
        master.add(col)
    initial = {id(c) for c in problem.initial}
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
        # the initial columns stay: they are the incumbent until a better one is found
        shrink=lambda: master.shrink(lambda c: id(c) in initial),
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
        stats.fixed_blocks, stats.strong_lps = bstats.fixed_blocks, bstats.strong_lps
        stats.nodes, stats.open_nodes = bstats.nodes, bstats.open_nodes
        stats.lagrangian_bound = max(stats.lagrangian_bound, min(bstats.bound, incumbent))
    stats.purged = master.purged
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
        f"{stats.fixed_blocks} blocks narrowed by reduced costs, {stats.strong_lps} strong "
        f"branching LPs); {stats.purged} columns purged"
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
    master: RestrictedMaster, problem: DantzigWolfeProblem, lam: np.ndarray, incumbent: float
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
    master: RestrictedMaster,
    problem: DantzigWolfeProblem,
    deadline: float,
    iterations_per_step: int = 25,
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
