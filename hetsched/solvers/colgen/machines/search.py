"""Branch-and-price over machine schedules (van den Akker et al. 1999; Kowalczyk & Leus 2018).

At every node, column generation on the restricted master (:mod:`.master`) by the engine's one
loop (:func:`hetsched.solvers.colgen.generate.generate`, each GPU class a block of m_k identical
copies) with automatic Wentges dual smoothing: prices pi = alpha pi_center + (1 - alpha) pi_LP,
where pi_center gave the best Lagrangian bound so far,

    L(pi) = sum_j pi_j + sum_k m_k min(0, min_s (c_s - sum_{j in s} pi_j))     (any pi),

computed from the pricing DP itself, so the node bound never rests on the LP solver's
tolerances. Objectives are integers (in units of weight x tick), so bounds round up. A node
whose master is infeasible runs phase one (Farkas pricing). Branching follows the DP: first a
job's end tick (T_j <= t | T_j >= t + 1, van den Akker et al.), then its class (only k | not k);
when every job has one class and one end tick in the LP, interval colouring gives a schedule of
the LP's cost (:func:`.schedules.colour_intervals`). Nodes are searched best bound first; the
integer master over the root's columns (HiGHS MIP) gives an early incumbent.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np

from hetsched.core.errors import SolverError
from hetsched.solvers.colgen.generate import Generation, generate
from hetsched.solvers.colgen.machines.data import MachineProblem
from hetsched.solvers.colgen.machines.master import MachineColumn, RestrictedMaster
from hetsched.solvers.colgen.machines.pricing import ClassPricer
from hetsched.solvers.colgen.machines.schedules import colour_intervals, column, list_schedule
from hetsched.solvers.colgen.problem import DantzigWolfeProblem


@dataclass(frozen=True)
class MachineSolution:
    """A schedule as one column per busy GPU, and its cost in units (w_j C_j summed)."""

    problem: MachineProblem
    columns: tuple[MachineColumn, ...]
    cost: int


@dataclass
class MachineStats:
    iterations: int = 0
    phase_one: int = 0  # nodes whose master needed phase one
    nodes: int = 0
    open_nodes: int = 0
    root_bound: float | None = None  # in units
    root_seconds: float = 0.0
    integer_master: float | None = None  # cost of the integer master's solution at the root


@dataclass
class MachineResult:
    solution: MachineSolution
    bound: float  # in units; a lower bound on every schedule's cost
    proven: bool
    timed_out: bool
    stats: MachineStats = field(default_factory=MachineStats)


@dataclass
class _Node:
    bound: float
    depth: int
    lo: np.ndarray
    hi: np.ndarray
    allowed: np.ndarray  # (n, K)


def round_up(x: float) -> float:
    """The least integer >= x, forgiving float noise of the sums that computed x."""
    return float(math.ceil(x - 1e-7 * max(1.0, abs(x)))) if math.isfinite(x) else x


class _Search:
    def __init__(
        self,
        prob: MachineProblem,
        deadline: float,
        seed: int,
        smoothing: float,
        columns_per_class: int,
        gap: float = 0.0,
    ):
        self.prob, self.deadline, self.alpha0, self.most, self.gap = (
            prob,
            deadline,
            smoothing,
            columns_per_class,
            gap,
        )
        self.master = RestrictedMaster(prob.n_jobs, prob.machines, seed)
        self.pricers = []
        for k in range(prob.n_classes):
            const = prob.w * (prob.release + prob.s[:, k])
            self.pricers.append(
                ClassPricer(
                    prob.smith_order(k),
                    prob.p[:, k].copy(),
                    prob.w.astype(float),
                    const.astype(float),
                    int(prob.horizon[k]),
                )
            )
        self.dw = DantzigWolfeProblem(
            n_blocks=prob.n_classes,
            capacity=np.ones(prob.n_jobs),
            price=self._price_block,
            initial=[],
            block_copies=np.asarray(prob.machines, dtype=float),
        )
        self.stats = MachineStats()
        self.keep = max(
            100, 3 * prob.n_jobs
        )  # columns kept when the master is cleaned up (measured: 2n-3n best)
        self.incumbent: MachineSolution | None = None

    # -- columns ---------------------------------------------------------------------------
    def add(self, col: MachineColumn) -> bool:
        return self.master.add(col)

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(column index, job, end tick, class) of every job in every real master column."""
        cols = [(i, c) for i, c in enumerate(self.master.columns) if c is not None]
        owner = np.concatenate([np.full(len(c.jobs), i) for i, c in cols])
        jobs = np.concatenate([c.jobs for _, c in cols])
        ends = np.concatenate([c.ends for _, c in cols])
        klass = np.concatenate([np.full(len(c.jobs), c.klass) for _, c in cols])
        return owner, jobs, ends, klass

    def compatible(self, node: _Node) -> np.ndarray:
        """Which master columns the node allows (artificial ones: False)."""
        ok = np.array([c is not None for c in self.master.columns])
        owner, jobs, ends, klass = self.entries()
        bad = ~node.allowed[jobs, klass] | (ends < node.lo[jobs]) | (ends > node.hi[jobs])
        ok[np.unique(owner[bad])] = False
        return ok

    def clean(self, pi: np.ndarray, sigma: np.ndarray) -> None:
        """Past 2x ``keep`` columns, delete the unused ones of largest reduced cost down to ``keep``."""
        n = len(self.master.columns)
        if n <= 2 * self.keep + self.prob.n_jobs:
            return
        owner, jobs, _, _ = self.entries()
        priced = np.bincount(owner, weights=pi[jobs], minlength=n)
        klass = np.array([-1 if c is None else c.klass for c in self.master.columns])
        rc = (
            np.asarray(self.master.costs)
            - priced
            - np.where(klass >= 0, sigma[np.maximum(klass, 0)], 0.0)
        )
        lam = self.master.values()
        rc[
            (klass < 0) | (lam > 1e-9) | (rc <= 1e-9)
        ] = -np.inf  # keep artificial, used and zero-cost columns
        order = np.argsort(-rc)[: n - self.prob.n_jobs - self.keep]
        drop = np.zeros(n, dtype=bool)
        drop[order[np.isfinite(rc[order])]] = True
        self.master.remove(drop)

    def cutoff(self) -> float:
        """A node whose rounded bound reaches this holds nothing worth finding."""
        if self.incumbent is None:
            return math.inf
        return self.incumbent.cost - 0.5 if self.gap <= 0 else self.incumbent.cost * (1 - self.gap)

    def offer(self, columns: list[MachineColumn], cost: int) -> None:
        if self.incumbent is None or cost < self.incumbent.cost:
            self.incumbent = MachineSolution(self.prob, tuple(columns), int(cost))

    # -- the column-generation engine's view -------------------------------------------------
    # The master's cover rows "sum_s a_js lambda_s = 1" are the engine's coupling rows with
    # capacity 1 and row prices -pi_j; each GPU class is a block of m_k identical copies, so the
    # engine's Lagrangian is L(pi) above.
    def solve_lp(self) -> tuple[float, np.ndarray, np.ndarray]:
        status, lp, pi, sigma = self.master.solve()
        if status == "infeasible":
            raise SolverError("machine schedules: the node's master LP is infeasible")
        self.clean(pi, sigma)
        return lp, -pi, sigma

    def _price_block(
        self, k: int, pi: np.ndarray, node: _Node, weight: float
    ) -> tuple[float, list[MachineColumn]]:
        """One class's least reduced cost min_s (weight c_s - sum_{j in s} pi_j) (0: the empty
        schedule) and up to ``columns_per_class`` schedules below 0."""
        best, found = self.pricers[k].price(
            pi, node.lo, node.hi, node.allowed[:, k], weight, self.most, 0.0
        )
        return best, [column(self.prob, k, jobs, ends) for jobs, ends in found]

    def _generate(self, node: _Node, weight: float, cutoff: float, **options) -> Generation:
        def block_prices(pi_engine: np.ndarray):
            pi = -pi_engine
            return lambda k: (pi, node, weight)

        run = generate(
            self,
            self.dw,
            self.deadline,
            block_prices,
            cutoff=cutoff,
            cost_weight=weight,
            dead_end="cap",
            **options,
        )
        self.stats.iterations += run.rounds
        return run

    # -- one node --------------------------------------------------------------------------
    def solve_node(self, node: _Node) -> tuple[str, float, np.ndarray | None]:
        """('pruned' | 'solved' | 'branch' | 'time', bound, lambda): column generation at a node."""
        ok = self.compatible(node)
        real = np.flatnonzero([c is not None for c in self.master.columns])
        self.master.set_upper(real, np.where(ok[real], np.inf, 0.0))
        options = dict(round_up=round_up, smoothing=self.alpha0, auto_smoothing=True)
        run = self._generate(node, 1.0, self.cutoff(), **options)
        if run.end == "infeasible":  # the node's branching left no feasible master: phase one
            if not self._phase_one(node):
                return "pruned", math.inf, None
            run = self._generate(node, 1.0, self.cutoff(), **options)
            if run.end == "infeasible":
                raise SolverError(
                    "machine schedules: the master LP became infeasible after phase one"
                )
        bound = round_up(run.bound)
        if run.end == "time":
            return "time", bound, None
        if run.end == "cutoff":
            return "pruned", bound, None
        return "branch", bound, self.master.values()

    def _phase_one(self, node: _Node) -> bool:
        """Phase one (Farkas pricing) at a node: True if the node's master has a feasible LP.

        The phase-one LP minimizes the artificial mass with real columns at zero cost; its value
        is never negative, so bounds clamp at 0: a positive Lagrangian bound proves the node
        infeasible, an LP value of 0 proves it feasible."""
        self.stats.phase_one += 1
        self.master.set_phase_one(True)
        try:
            run = self._generate(node, 0.0, 1e-9, round_up=lambda v: max(v, 0.0), smoothing=0.0)
            if run.end == "time":
                return True  # out of time: let the caller notice the clock
            return run.end != "cutoff" and run.lp is not None and run.lp <= 1e-9
        finally:
            self.master.set_phase_one(False)

    # -- branching --------------------------------------------------------------------------
    def branch(self, node: _Node, lam: np.ndarray) -> list[_Node] | None:
        """The children of a node from its LP solution, or None when every job has one class and
        one end tick (the LP is a schedule: :meth:`leaf`)."""
        mass: dict[int, dict[tuple[int, int], float]] = {}
        for i in np.flatnonzero(lam > 1e-7):
            col = self.master.columns[i]
            if col is None:
                continue
            for j, e in zip(col.jobs.tolist(), col.ends.tolist()):
                d = mass.setdefault(j, {})
                d[(col.klass, e)] = d.get((col.klass, e), 0.0) + float(lam[i])
        best_job, best_split, best_score = -1, 0, 0.0
        for j, d in mass.items():
            ends = sorted({e for _, e in d})
            if len(ends) < 2:
                continue
            by_end = [sum(v for (_, e2), v in d.items() if e2 == e) for e in ends]
            left = np.cumsum(by_end)[:-1]
            score = np.minimum(left, sum(by_end) - left)
            i = int(np.argmax(score))
            if score[i] > best_score + 1e-12:
                best_job, best_split, best_score = j, ends[i], float(score[i])
        if best_job >= 0:
            a, b = self._child(node), self._child(node)
            a.hi[best_job] = best_split
            b.lo[best_job] = best_split + 1
            return [a, b]
        for j, d in mass.items():
            classes = {}
            for (k, _), v in d.items():
                classes[k] = classes.get(k, 0.0) + v
            if len(classes) > 1:
                k = max(classes, key=classes.get)
                a, b = self._child(node), self._child(node)
                a.allowed[j] = False
                a.allowed[j, k] = True
                b.allowed[j, k] = False
                return [a, b]
        return None

    def _child(self, node: _Node) -> _Node:
        return _Node(
            node.bound, node.depth + 1, node.lo.copy(), node.hi.copy(), node.allowed.copy()
        )

    def leaf(self, lam: np.ndarray) -> tuple[list[MachineColumn], int] | None:
        klass = np.full(self.prob.n_jobs, -1)
        end = np.zeros(self.prob.n_jobs, dtype=np.int64)
        for i in np.flatnonzero(lam > 1e-7):
            col = self.master.columns[i]
            if col is not None:
                klass[col.jobs], end[col.jobs] = col.klass, col.ends
        if (klass < 0).any():
            return None
        cols = colour_intervals(self.prob, klass, end)
        return None if cols is None else (cols, sum(c.cost for c in cols))


def solve_machine_schedules(
    prob: MachineProblem,
    time_limit: float | None = None,
    seed: int = 0,
    smoothing: float = 0.8,
    columns_per_class: int = 10,
    integer_master_share: float = 0.1,
    gap: float = 0.0,
) -> MachineResult:
    """Branch-and-price until the bound meets the incumbent (within the relative ``gap``) or the
    time limit; ``proven`` only when the bound meets it with ``gap`` 0."""
    t0 = time.perf_counter()
    deadline = t0 + (math.inf if time_limit is None else float(time_limit))
    s = _Search(prob, deadline, seed, smoothing, columns_per_class, gap)
    start = list_schedule(prob)
    s.offer(start, sum(c.cost for c in start))
    for col in start:
        s.add(col)
    K = prob.n_classes
    root = _Node(
        -math.inf,
        0,
        np.zeros(prob.n_jobs, dtype=np.int64),
        np.full(prob.n_jobs, int(prob.horizon.max()), dtype=np.int64),
        np.ones((prob.n_jobs, K), dtype=np.bool_),
    )
    heap: list[tuple[float, int, int, _Node]] = [(root.bound, 0, 0, root)]
    counter, timed_out, current = 1, False, None
    pruned = (
        math.inf
    )  # the least bound of a node dropped for reaching the cutoff (with a gap, below the incumbent)
    while heap:
        bound, _, _, node = heapq.heappop(heap)
        if bound >= s.cutoff():
            break
        current = node
        status, node_bound, lam = s.solve_node(node)
        s.stats.nodes += 1
        if node.depth == 0:
            s.stats.root_bound, s.stats.root_seconds = node_bound, time.perf_counter() - t0
            if status == "branch":
                _integer_master(s, deadline, t0, integer_master_share)
        if status == "time":
            node.bound = max(node.bound, node_bound)
            timed_out = True
            break
        current = None
        if status == "pruned":
            pruned = min(pruned, node_bound)
            continue
        node.bound = max(node.bound, node_bound)
        if node.bound >= s.cutoff():
            pruned = min(pruned, node.bound)
            continue
        children = s.branch(node, lam)
        if children is None:
            got = s.leaf(lam)
            if got is None:
                raise SolverError(
                    "machine schedules: the LP's jobs have one class and end each but do not fit "
                    "their GPUs (van den Akker et al., Theorem 2)"
                )
            s.offer(*got)
            continue
        for child in children:
            child.bound = node.bound
            heapq.heappush(heap, (child.bound, -child.depth, counter, child))
            counter += 1
    s.stats.open_nodes = len(heap) + (current is not None)
    opened = [b for b, *_ in heap] + ([current.bound] if current is not None else [])
    bound = min([float(s.incumbent.cost), pruned] + opened)
    proven = bound >= s.incumbent.cost - 0.5
    return MachineResult(
        s.incumbent, bound if math.isfinite(bound) else -math.inf, proven, timed_out, s.stats
    )


def _integer_master(s: _Search, deadline: float, t0: float, share: float) -> None:
    """The integer master over the root's columns, for an early incumbent."""
    left = deadline - time.perf_counter()
    if left <= 0.1:
        return
    allowed = np.array([c is not None for c in s.master.columns])
    got = s.master.solve_integer(allowed, min(left * share, 30.0) if math.isfinite(left) else 30.0)
    if got is not None:
        value, chosen = got
        cols = [s.master.columns[i] for i in chosen]
        s.stats.integer_master = value
        if sorted(int(j) for c in cols for j in c.jobs) == list(range(s.prob.n_jobs)):
            s.offer(cols, sum(c.cost for c in cols))
