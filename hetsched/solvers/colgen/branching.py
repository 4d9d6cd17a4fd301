"""Branch-and-price on top of the root column generation (:mod:`hetsched.solvers.colgen.master`).

Branching is first on a block's cost: if block b's columns with lambda > 0 differ in cost, the
children keep its columns of cost <= theta and > theta, theta their lambda-weighted mean (for
Hare, a job's completion time: C_n <= t or C_n > t). Pricing takes the cost range. With
``DantzigWolfeProblem.strong_branching`` k > 1, the k most balanced such splits are compared by
their two children's LPs over the master's columns (each an overestimate of the child's LP, a
score only) and the largest product of the two rises is taken. When every block's fractional
columns cost the same, branching is on the coupling rows, per block: with x_{b,row} = sum_{c in
b} usage_{c,row} lambda_c, pick a row that two blocks use and where some block b has x_{b,row}
fractional. The two children partition the solutions when no two blocks can use a row together
(``DantzigWolfeProblem.exclusive_rows``, e.g. one task per GPU-tick):

    left:  block b does not use the row;     right: no other block uses the row.

(Where two blocks may share a row, a solution in which b and another block both use it lies in
neither child; such problems branch on costs only.)

Both are row bans per block, which pricing obeys by a prohibitive price on the banned rows, so
no formulation needs to know about branching. Both children cut off the parent's LP solution
(the left one x_{b,row} > 0, the right one the other block's use). A node whose LP solution
has no such row is solved by rounding: every row then has at most one user, so giving each
block its cheapest column with lambda > 0 is feasible and costs no more than the LP.

Before branching, reduced-cost fixing narrows each block's cost range. For row prices pi >= 0
with Lagrangian bound L(pi), a solution using column c of block b costs at least L(pi) + rc(c),
rc(c) = cost_c + pi . usage_c - min_{c' in b}(cost_c' + pi . usage_c') >= 0 (the other blocks
contribute at least their minima, the coupling rows at most pi . capacity). So no column with
L(pi) + rc(c) above the best cost that could still beat the incumbent is needed; the costs of
such columns form the two ends of the block's cost range, found by bisection on pricing calls
with cost ranges (for Hare: a job's completion times that cannot occur in a better schedule).

Each node's column generation adds columns, and the master's re-solves slow down with them
(an iteration prices every column; the master is degenerate, hundreds of iterations a
re-solve). With ``DantzigWolfeProblem.shrink_nodes``, before each LP solve of a node the master
sheds columns once it holds more than its rows: those of largest reduced cost in the last LP,
never a basic one, the incumbent's or an artificial one (``RestrictedMaster.shrink``; the root
always does, keeping the initial columns). A deleted column a node needs is priced again:
every node bound is still a Lagrangian bound of the node. It is off by default because the
master is degenerate: other columns give other optimal vertices and so other branchings, and
the tree can grow many times (docs/benchmarks.md, session 50).

Nodes are explored best bound first. A node's column generation starts from its parent's best
row prices: its first Lagrangian bound is taken there (any prices give a valid bound of the
node, whose pricing obeys its branch), and they are the first centre of its smoothing. Each
node's bound is its own Lagrangian bound; the
global bound is the least bound of the open nodes, so a run cut by the clock still reports a
valid bound, and optimality is claimed only when no open node is left.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from hetsched.solvers.colgen.generate import generate
from hetsched.solvers.colgen.problem import artificials, feasible


@dataclass
class BranchStats:
    nodes: int = 0
    open_nodes: int = 0
    proven: bool = False
    bound: float = -math.inf
    fixed_blocks: int = 0  # blocks whose cost range reduced-cost fixing narrowed
    strong_lps: int = 0  # LPs solved to compare cost splits (strong branching)


def children(range_: tuple[float, float], theta: float) -> tuple[tuple[float, float], ...]:
    """The cost ranges (lo, hi] of a block's two children split at ``theta``."""
    lo, hi = range_
    return (lo, min(hi, theta)), (max(lo, theta), hi)


def fix_cost_ranges(
    problem, pi: np.ndarray, target: float, tolerance: float, deadline: float
) -> dict[int, tuple[float, float]]:
    """Reduced-cost fixing: per block b, a range (lo, hi] that every column of b in a solution
    of cost <= ``target`` has its cost in, from the row prices ``pi`` (module docstring).
    Bisection stops within ``tolerance`` of the cost; blocks left out keep every cost."""
    prepared = pi if problem.prepare is None else problem.prepare(pi)
    least = [problem.price(b, prepared) for b in range(problem.n_blocks)]
    if any(not cols for _, cols in least):
        return {}
    lagrangian = sum(v for v, _ in least) - float(pi @ np.asarray(problem.capacity, dtype=float))
    slack = target - lagrangian  # a column of reduced cost above this is in no such solution
    if slack < 0:
        return {}
    ranges: dict[int, tuple[float, float]] = {}
    for b, (value, cols) in enumerate(least):
        if time.perf_counter() >= deadline:
            break

        def out(lo: float, hi: float) -> bool:  # no column of cost in (lo, hi] has rc <= slack
            return problem.price(b, prepared, lo, hi)[0] - value > slack + 1e-9 * max(
                1.0, abs(value)
            )

        best_cost = cols[0].cost
        # upper end: cost_c <= cost_c + pi . usage_c, so every column above value + slack is out
        a, z = best_cost, max(best_cost, value + slack)
        while z - a > tolerance and time.perf_counter() < deadline:
            m = (a + z) / 2
            a, z = (a, m) if out(m, math.inf) else (m, z)
        hi = z
        # lower end: step down from the least priced column's cost until everything below is out
        a, step = best_cost, max(tolerance, 1e-9 * max(1.0, abs(best_cost)))
        z = None
        for _ in range(60):
            if out(-math.inf, a - step):
                z = a - step
                break
            a, step = a - step, 2 * step
        lo = -math.inf
        if z is not None:  # bisect between z (everything at or below it is out) and a (not)
            while a - z > tolerance and time.perf_counter() < deadline:
                m = (a + z) / 2
                z, a = (m, a) if out(-math.inf, m) else (z, m)
            lo = z
        if lo > -math.inf or hi < math.inf:
            ranges[b] = (lo, hi)
    return ranges


def branch_and_price(
    master,
    problem,
    incumbent: float,
    chosen: np.ndarray | None,
    root_bound: float,
    deadline: float,
    round_up,
    root_prices: np.ndarray | None = None,
    smoothing: float = 0.8,
) -> tuple[float, np.ndarray | None, BranchStats]:
    """Best-first branch-and-price from the root, its cost ranges first narrowed by reduced-cost
    fixing at ``root_prices`` (the row prices of the root's best Lagrangian bound). Returns
    (incumbent, its lambda, stats)."""
    stats = BranchStats(bound=root_bound)
    big, _ = artificials(master, problem)  # keep every node LP feasible; priced at `big`
    # the incumbent as columns (the master's indices move when it shrinks): at first the
    # given solution, or the initial columns, the master's first ones
    best = (
        list(master.columns[: len(problem.initial)])
        if chosen is None
        else [master.columns[i] for i in np.flatnonzero(chosen > 0.5)]
    )
    row_sets: dict[int, tuple] = {}  # id(column) -> (column, its rows as a set)

    def rows_of(i: int) -> frozenset:
        return rows_of_column(master.columns[i])

    def rows_of_column(col) -> frozenset:
        got = row_sets.get(id(col))
        if got is None or got[0] is not col:  # a deleted column's id may be reused
            got = row_sets[id(col)] = (col, frozenset(np.asarray(col.rows).tolist()))
        return got[1]

    def allowed(col, bans: dict[int, frozenset], ranges: dict) -> bool:
        """Whether column ``col`` may be used at the node of ``bans`` and ``ranges``."""
        if col.artificial:
            return True
        banned = bans.get(col.block)
        lo, hi = ranges.get(col.block, (-math.inf, math.inf))
        return lo < col.cost <= hi and not (banned and rows_of_column(col) & banned)

    def set_node(bans: dict[int, frozenset], ranges: dict[int, tuple[float, float]]) -> None:
        upper = np.array([np.inf if allowed(c, bans, ranges) else 0.0 for c in master.columns])
        # change only the bounds that differ: HiGHS then re-solves from its basis in few pivots
        changed = np.flatnonzero(upper != np.asarray(master.upper))
        if changed.size:
            master.set_bounds(changed, 0.0, upper[changed])

    def prepared_for(pi: np.ndarray, bans: dict[int, frozenset]):
        shared = pi if problem.prepare is None else problem.prepare(pi)
        out = {}
        for b in range(problem.n_blocks):
            if bans.get(b):
                p = pi.copy()
                p[np.fromiter(bans[b], dtype=np.int64)] += big
                out[b] = p if problem.prepare is None else problem.prepare(p)
            else:
                out[b] = shared
        return out

    def shrink_keeping_best() -> None:
        """Shed the master's columns, never the incumbent's (``RestrictedMaster.shrink``)."""
        held = {id(c) for c in best}
        master.shrink(lambda c: id(c) in held)

    def solve_node(bans, ranges, bound, start):
        """Column generation at a node from ``start`` (its parent's best prices: the node's
        first Lagrangian bound, already above the parent's where the branch bites, and the
        first smoothing centre): (status, bound, lambda, prices) with status
        pruned|done|time."""
        set_node(bans, ranges)

        def node_prices(pi: np.ndarray):
            prepared = prepared_for(pi, bans)
            return lambda b: (prepared[b], *ranges.get(b, (-math.inf, math.inf)))

        run = generate(
            master,
            problem,
            deadline,
            node_prices,
            bound=bound,
            smoothing=smoothing,
            cutoff=incumbent - 1e-9 * max(1.0, abs(incumbent)),
            round_up=round_up,
            big=big,
            dead_end="cap",
            start=start,
            shrink=shrink_keeping_best if problem.shrink_nodes else None,
            # a column the node's pricing offers beside its best may break the node's branch
            # (its cost range or a banned row): it does not enter the node's master
            admitted=lambda col: allowed(col, bans, ranges),
        )
        prices = start if run.prices is None else run.prices
        if run.end == "time":
            return "time", run.bound, None, prices
        if run.end in ("cutoff", "infeasible"):  # no better solution below this node
            return "pruned", run.bound, None, prices
        return "done", run.bound, master.lambdas(), prices

    def branch_cost(lam: np.ndarray, bans, ranges, value: float):
        """(block, theta) splitting a block whose fractional columns differ in cost at their
        lambda-weighted mean cost theta; None if there is none. Of the
        ``problem.strong_branching`` most balanced such splits, the one whose two children's
        LPs over the master's columns rise most (product rule); the most balanced if fewer
        than two are compared."""
        per: dict[int, list[tuple[float, float]]] = {}
        for i in np.flatnonzero(lam > 1e-9):
            col = master.columns[i]
            if not col.artificial:
                per.setdefault(col.block, []).append((col.cost, float(lam[i])))
        splits = []
        for b, items in per.items():
            costs = [c for c, _ in items]
            if max(costs) - min(costs) <= 1e-9 * max(1.0, abs(max(costs))):
                continue
            mass = sum(x for _, x in items)
            theta = sum(c * x for c, x in items) / mass
            left = sum(x for c, x in items if c <= theta) / mass
            splits.append((-min(left, 1.0 - left), b, theta))
        splits.sort()
        splits = splits[: max(1, problem.strong_branching)]
        if len(splits) < 2:
            return (splits[0][1], splits[0][2]) if splits else None
        least = 1e-6 * max(1.0, abs(value))
        best, pick = -1.0, None
        for _, b, theta in splits:
            score = 1.0
            for child in children(ranges.get(b, (-math.inf, math.inf)), theta):
                set_node(bans, {**ranges, b: child})
                # the child's LP over the columns so far: above its true LP (columns are
                # missing), a score only; over the incumbent it would be pruned anyway
                score *= max(min(master.solve_lp()[0], incumbent) - value, least)
            stats.strong_lps += 2
            if score > best:
                best, pick = score, (b, theta)
        return pick

    def branch_row(lam: np.ndarray):
        """(block, row) to branch on, or None when no row has two users and a fractional one
        (always None where rows are not exclusive: the bans would not partition)."""
        if not problem.exclusive_rows:
            return None
        use: dict[int, dict[int, float]] = {}
        for i in np.flatnonzero(lam > 1e-9):
            col = master.columns[i]
            if col.artificial:
                continue
            for row in rows_of(i):
                per = use.setdefault(row, {})
                per[col.block] = per.get(col.block, 0.0) + float(lam[i])
        best, pick = 0.0, None
        for row, per in use.items():
            if len(per) < 2:
                continue
            for b, x in per.items():
                f = min(x, 1.0 - x)
                if f > 1e-6 and f > best:
                    best, pick = f, (b, row)
        return pick

    fixed: dict[int, tuple[float, float]] = {}
    if root_prices is not None:
        step = problem.objective_step
        # a better solution costs at most the incumbent less one step of the objective's grid
        target = incumbent - step if step else incumbent
        fixed = fix_cost_ranges(
            problem, root_prices, target, (step or 1e-6 * max(1.0, abs(incumbent))) / 2, deadline
        )
        stats.fixed_blocks = len(fixed)
    counter = 0
    heap: list = [(root_bound, counter, {}, fixed, root_prices)]
    incomplete = False
    try:
        while heap:
            bound, _, bans, ranges, start = heapq.heappop(heap)
            if round_up(bound) >= incumbent - 1e-9 * max(1.0, abs(incumbent)):
                continue
            stats.nodes += 1
            status, node_bound, lam, prices = solve_node(bans, ranges, bound, start)
            if status == "time":
                counter += 1
                heapq.heappush(heap, (node_bound, counter, bans, ranges, prices))
                break
            if status == "pruned":
                continue
            split = branch_cost(lam, bans, ranges, master.solve_lp()[0])
            if split is not None:  # first on a block's cost (its completion time, for Hare)
                b, theta = split
                for child in children(ranges.get(b, (-math.inf, math.inf)), theta):
                    counter += 1
                    heapq.heappush(heap, (node_bound, counter, bans, {**ranges, b: child}, prices))
                continue
            pick = branch_row(lam)
            if pick is None:
                picked = []
                for b in range(problem.n_blocks):
                    cands = [
                        i
                        for i in np.flatnonzero(lam > 1e-9)
                        if master.columns[i].block == b and not master.columns[i].artificial
                    ]
                    if not cands:
                        break
                    picked.append(min(cands, key=lambda i: master.columns[i].cost))
                if len(picked) == problem.n_blocks and feasible(
                    [master.columns[i] for i in picked], problem
                ):
                    cost = sum(master.columns[i].cost for i in picked)
                    if cost < incumbent - 1e-9:
                        incumbent = cost
                        best = [master.columns[i] for i in picked]
                elif len(picked) == problem.n_blocks:
                    incomplete = True  # cannot branch and cannot round: never claim optimality
                continue
            b, row = pick
            counter += 1
            left = dict(bans)
            left[b] = left.get(b, frozenset()) | {row}
            heapq.heappush(heap, (node_bound, counter, left, ranges, prices))
            counter += 1
            right = {k: v for k, v in bans.items()}
            for other in range(problem.n_blocks):
                if other != b:
                    right[other] = right.get(other, frozenset()) | {row}
            heapq.heappush(heap, (node_bound, counter, right, ranges, prices))
    finally:
        n = len(master.columns)
        master.set_bounds(np.arange(n), 0.0, np.inf)
        master.set_bounds([i for i, c in enumerate(master.columns) if c.artificial], 0.0, 0.0)
        held = {id(c) for c in best}
        chosen = np.array([1.0 if id(c) in held else 0.0 for c in master.columns])
    open_bounds = [
        nb for nb, *_ in heap if round_up(nb) < incumbent - 1e-9 * max(1.0, abs(incumbent))
    ]
    stats.open_nodes = len(open_bounds)
    stats.proven = not open_bounds and not incomplete
    stats.bound = (
        incumbent if stats.proven else min(open_bounds + [incumbent]) if open_bounds else root_bound
    )
    return incumbent, chosen, stats
