"""The column-generation loop: the one loop behind the root, the dive and every branch-and-price
node (:mod:`hetsched.solvers.colgen.master`, :mod:`hetsched.solvers.colgen.branching`).

Each round solves the restricted master LP, prices every free block at (Wentges-smoothed) row
prices, adds the columns whose reduced cost at the LP duals is negative, and keeps the best
Lagrangian bound L(pi) = sum_b min_c (cost_c + pi . usage_c) - pi . capacity. What differs
between root, dive and node is a parameter: the prices each block sees (banned rows at a node,
exhausted rows in the dive), the blocks left out (fixed by the dive), the cutoff, smoothing and
how many rounds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from hetsched.core.errors import SolverError
from hetsched.solvers.colgen.problem import Column, DantzigWolfeProblem, add_usage, prices_out

# block -> (what problem.price reads for that block, cost_lo, cost_hi), or None: leave it out
BlockPrices = Callable[[int], "tuple[Any, float, float] | None"]


@dataclass
class Generation:
    """How a run of the loop ended and what it proved.

    ``end``: ``done`` (no column prices out at the LP duals, or the bound cannot rise further),
    ``cutoff`` (the rounded bound reached the cutoff), ``time``, ``rounds`` (``max_rounds``
    reached), ``infeasible`` (the master LP has no solution) or ``dead`` (a block has no column
    left under the given prices, with ``dead_end="stop"``)."""

    end: str
    bound: float  # the best Lagrangian bound, computed from the pricing (never the LP's value)
    lp: float | None  # the last master LP value
    prices: np.ndarray | None  # row prices whose Lagrangian value is ``bound``
    rounds: int


def generate(
    master: Any,
    problem: DantzigWolfeProblem,
    deadline: float,
    block_prices: Callable[[np.ndarray], BlockPrices],
    *,
    bound: float = -math.inf,
    cutoff: float = math.inf,
    round_up: Callable[[float], float] = lambda v: v,
    smoothing: float = 0.8,
    auto_smoothing: bool = False,
    cost_weight: float = 1.0,
    max_rounds: int | None = None,
    big: float | None = None,
    dead_end: str = "raise",
    bound_checks: bool = True,
    start: np.ndarray | None = None,
    on_bound: Callable[[float], None] | None = None,
    shrink: Callable[[], None] | None = None,
    admitted: Callable[[Column], bool] | None = None,
) -> Generation:
    """Column generation on ``master`` until done, the cutoff, the deadline or ``max_rounds``.

    ``block_prices(pi)`` gives, per block, what ``problem.price`` reads at row prices ``pi``
    (None leaves the block out). ``big``: the price of a forbidden row; a block with no column,
    or whose least priced column costs ``big / 2`` or more (it uses a forbidden row, while the
    prices are small), is a dead end: ``dead_end`` says whether that raises (``raise``, no
    column at all), counts into the bound (``cap``: ``big`` for no column, else the value
    itself, which cuts the node off when the prices are small and stays a valid Lagrangian
    term when they are not) or ends the run (``stop``). ``bound_checks=False`` (the dive, whose left-out blocks make the
    Lagrangian meaningless) ends only on ``done``, the deadline or ``max_rounds``.

    ``auto_smoothing``: adapt the smoothing factor each round from the Lagrangian's subgradient
    at the smoothed prices (Pessoa et al. 2018). ``cost_weight=0``: phase one (Farkas pricing),
    where the master's real columns cost nothing; columns are judged at zero cost. ``start``:
    row prices the first round prices at (then the first smoothing centre), instead of the
    LP duals. ``on_bound``: called with the bound each time it rises (after the round that
    priced every block at the prices behind it). ``shrink``: called before each round's LP
    solve, to delete columns from the master (``RestrictedMaster.shrink``). ``admitted(col)``:
    whether a column the pricing found may enter the master (a branch's restrictions)."""
    cap = np.asarray(problem.capacity, dtype=float)
    copies = problem.block_copies
    center = None if start is None else np.asarray(start, dtype=float)
    prices: np.ndarray | None = None
    alpha, saved, lp, rounds = smoothing, smoothing, None, 0
    tol = lambda v: 1e-9 * max(1.0, abs(v))  # noqa: E731
    while True:
        if time.perf_counter() >= deadline:
            return Generation("time", bound, lp, prices, rounds)
        if max_rounds is not None and rounds >= max_rounds:
            return Generation("rounds", bound, lp, prices, rounds)
        if shrink is not None:
            shrink()
        try:
            lp, pi_lp, mu = master.solve_lp()
        except SolverError:
            if dead_end == "raise":
                raise
            return Generation("infeasible", math.inf, lp, prices, rounds)
        rounds += 1
        # Wentges smoothing towards the prices of the best bound so far (first: ``start``)
        if rounds == 1 and start is not None:
            pi = center
        else:
            pi = pi_lp if center is None or alpha <= 0 else alpha * center + (1 - alpha) * pi_lp
        exact = pi is pi_lp
        per_block = block_prices(pi)
        lagr = -float(pi @ cap)
        grad = -cap.copy() if auto_smoothing else None  # a subgradient of the Lagrangian at pi
        found = []
        for b in range(problem.n_blocks):
            if time.perf_counter() >= deadline:  # mid-round: no bound from it, its columns kept
                for col in found:
                    master.add(col)
                return Generation("time", bound, lp, prices, rounds)
            args = per_block(b)
            if args is None:
                continue
            value, cols = problem.price(b, *args)
            if copies is not None:  # up to copies[b] columns of the block, each may be empty
                if cols and value < 0:
                    lagr += copies[b] * value
                    if grad is not None:
                        add_usage(grad, cols[0], copies[b])
            elif not cols or (big is not None and value >= big / 2):
                if dead_end == "stop":
                    return Generation("dead", bound, lp, prices, rounds)
                if dead_end == "raise" and not cols:
                    raise SolverError(f"colgen: block {b} has no column at all")
                # no column at all: the node has no solution. Else the least priced column
                # costs at least big/2, which says "every column uses a forbidden row" only
                # while the prices are small: at LP duals grown by the artificial columns it
                # need not, so the value itself is taken, a Lagrangian term at any prices
                lagr += value if cols else (big if big is not None else math.inf)
                continue
            else:
                lagr += value
                if grad is not None:
                    add_usage(grad, cols[0], 1.0)
            found += [
                col
                for col in cols
                if prices_out(col, pi_lp, mu[b], cost_weight)
                and (admitted is None or admitted(col))
            ]
        if grad is not None and not exact:
            # the subgradient points from the centre towards the LP duals: smooth less
            if float(grad @ (pi_lp - center)) > 0:
                alpha = max(0.0, alpha - 0.1)
            else:
                alpha = min(0.99, alpha + 0.1 * (1 - alpha))
        if lagr > bound or center is None:
            center = pi.copy()
        if lagr > bound:
            bound, prices = lagr, center
            if on_bound is not None:
                on_bound(bound)
        for col in found:
            master.add(col)
        if bound_checks and round_up(bound) >= cutoff:
            return Generation("cutoff", bound, lp, prices, rounds)
        if not found:
            if not exact:  # mispricing under smoothing: price once at the LP duals
                saved, alpha = alpha, 0.0
                continue
            # no column prices out at the LP duals: the LP is optimal and the Lagrangian bound
            # at those duals (computed this round, from the pricing itself) certifies it
            return Generation("done", bound, lp, prices, rounds)
        if exact:
            alpha = saved if saved > 0 else smoothing
        if bound_checks and round_up(lp) <= round_up(bound) + tol(lp):
            master.solve_lp()  # tail-off: the bound cannot rise further; the new columns join the LP
            return Generation("done", bound, lp, prices, rounds)
