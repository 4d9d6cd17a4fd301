"""The data of a Dantzig-Wolfe decomposition (blocks, coupling rows, columns) and the checks
on columns that the root column generation and branch-and-price share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import highspy
import numpy as np


@dataclass(frozen=True)
class Column:
    """One feasible piece of a block: its cost, the coupling rows it uses (once each, or
    ``amounts`` times), and what the formulation needs to rebuild it (``payload``)."""

    block: int
    cost: float
    rows: np.ndarray
    payload: Any = None
    amounts: np.ndarray | None = None  # None: 1 per listed row
    artificial: bool = (
        False  # the engine's own high-cost column that keeps an LP feasible; never a solution
    )


@dataclass
class DantzigWolfeProblem:
    n_blocks: int
    capacity: np.ndarray  # upper bound of each coupling row
    # (block, prepare(pi), cost_lo, cost_hi) -> (least priced cost min_c cost_c + pi . usage_c over
    # the block's columns with cost_lo < cost_c <= cost_hi, [a column attaining it, then any
    # other columns of the block worth trying]); (inf, []) when no column lies in the range.
    # The range is a branching decision; it defaults to all.
    price: Callable[..., tuple[float, list[Column]]]
    initial: list[Column]  # together a feasible integer solution: one column per block
    objective_divisor: float = 1.0  # the problem's objective is raw / divisor
    # a bound the formulation knows before any pricing, below the master LP's optimum too (e.g.
    # each block's least cost alone): the Lagrangian bound starts there, so a root cut short by
    # the time limit before its first round of pricing ends still has a bound
    lower_bound: float = -math.inf
    # the problem maximizes and the costs are its negated objective (the engine minimizes): the
    # log then shows the problem's own values; the caller still negates what it reads
    negated: bool = False
    objective_step: float | None = (
        None  # raw objectives are integer multiples of it (bound rounding)
    )
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    exact: bool = True
    prepare: Callable[[np.ndarray], Any] | None = (
        None  # pi -> what price() reads (e.g. prefix sums), once per round
    )
    # (columns, LP lambda) -> one column per block forming a feasible solution, or None: a
    # rounding heuristic guided by the LP (the engine checks the capacity rows itself)
    round_lp: Callable[[list[Column], np.ndarray], list[Column] | None] | None = None
    dive: bool = True  # after column generation, a diving heuristic for the incumbent
    # then the integer master over the generated columns, for the incumbent (off: a caller that
    # has a good schedule already and wants the time for the bound)
    integer_master: bool = True
    branch: bool = True  # then branch-and-price (row bans per block) until proven or out of time
    # no two blocks can use one coupling row together (e.g. unit rows, one task per GPU-tick):
    # only then do the row bans of branching partition the solutions (module doc of
    # ``branching``); without it branching is on costs alone, and a node that cost branching
    # cannot split is left unproven
    exclusive_rows: bool = False
    # the nodes of branch-and-price shed columns as the root does (RestrictedMaster.shrink):
    # faster re-solves, but other LP vertices and so other branchings (benchmarks: 24 nodes
    # instead of 14 in 240 s on ladder(32, 4), and 9,399 instead of 635 to prove small-15)
    shrink_nodes: bool = False
    # branch-and-price compares this many of the most balanced cost splits by their children's
    # LPs over the master's columns (strong branching on the restricted master); 1: the most
    # balanced split, unscored. Off by default: fewer nodes on small Hare instances (small-15:
    # 459 against 635) but no better bound in the same time on the ladders (benchmarks, session 51)
    strong_branching: int = 1
    # blocks of identical copies (e.g. the GPUs of one class): block b may use up to
    # block_copies[b] columns, each possibly empty (cost 0, no rows); None: exactly one each
    block_copies: np.ndarray | None = None
    max_iterations: int | None = (
        None  # stop the root column generation after this many rounds (None: until done)
    )
    # HiGHS's primal and dual feasibility tolerance on the master LP (None: HiGHS's 1e-7). A
    # master whose optimum must be exact to 1e-9 needs a tighter one: under 1e-7 a column that
    # prices out by less is not taken and the loop stalls short of the bound
    lp_tolerance: float | None = None
    # row prices to start from (e.g. a relaxation's duals): the root's first round prices the
    # blocks there, so its Lagrangian bound is theirs from the start, and smooths towards them
    initial_prices: np.ndarray | None = None
    # the root adapts its smoothing factor each round (``generate``'s ``auto_smoothing``)
    auto_smoothing: bool = False
    # called with the root's Lagrangian bound each time it rises, right after the round that
    # priced every block at its prices (a node's bound holds in its subtree only: never called
    # there), e.g. to narrow what the pricing searches by reduced costs against the incumbent
    on_root_bound: Callable[[float], None] | None = None


def artificials(master: Any, problem: DantzigWolfeProblem) -> tuple[float, list[int]]:
    """(their cost, indices) of one artificial column per block: cost ``big``, no rows, enabled.

    They keep an LP feasible while columns are fixed or banned (the dive, branch-and-price);
    the first caller adds them and later ones switch the same columns back on.
    """
    big = 1e3 * (1.0 + sum(abs(c.cost) for c in problem.initial))
    indices = [i for i, c in enumerate(master.columns) if c.artificial]
    if not indices:
        indices = list(range(len(master.columns), len(master.columns) + problem.n_blocks))
        for b in range(problem.n_blocks):
            master.add(Column(b, big, np.zeros(0, dtype=np.int64), None, artificial=True))
    master.set_bounds(indices, 0.0, highspy.kHighsInf)
    return big, indices


def prices_out(col: Column, pi_lp: np.ndarray, mu_b: float, cost_weight: float = 1.0) -> bool:
    """True if the column's reduced cost at the LP duals (pi, mu) is negative: it can improve the
    LP (``cost_weight`` 0: phase one, where columns cost nothing)."""
    cost = cost_weight * col.cost
    return cost + usage_price(col, pi_lp) - mu_b < -1e-9 * max(1.0, abs(cost))


def add_usage(into: np.ndarray, col: Column, times: float) -> None:
    """``into += times * usage(col)``: the column's use of each coupling row."""
    rows = np.asarray(col.rows, dtype=np.int64)
    np.add.at(into, rows, times if col.amounts is None else times * np.asarray(col.amounts))


def feasible(columns: list[Column], problem: DantzigWolfeProblem) -> bool:
    """One column per block, within every capacity row."""
    if sorted(c.block for c in columns) != list(range(problem.n_blocks)):
        return False
    used = np.zeros(len(problem.capacity))
    for c in columns:
        np.add.at(
            used,
            np.asarray(c.rows, dtype=np.int64),
            1.0 if c.amounts is None else np.asarray(c.amounts),
        )
    return bool(np.all(used <= np.asarray(problem.capacity) + 1e-9))


def usage_price(col: Column, pi: np.ndarray) -> float:
    rows = np.asarray(col.rows, dtype=np.int64)
    return float(
        pi[rows].sum() if col.amounts is None else pi[rows] @ np.asarray(col.amounts, dtype=float)
    )
