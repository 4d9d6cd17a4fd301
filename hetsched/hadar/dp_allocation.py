"""Hadar's Algorithm 2: DP_allocation over the queued jobs of one slot, and FIND_ALLOC (one job's
candidate gangs at the current prices).

FIND_ALLOC(j, free GPUs, prices): candidate gangs of W_j GPUs; types are taken in descending
order of X_j^r (line 23), so a candidate using the q fastest types has bottleneck X of the q-th.
* consolidated (line 24): all W_j GPUs on one machine, for every machine and every q;
* spread (line 25): W_j GPUs over all machines, for every q, plus a communication cost
  ``comm_cost`` x (machines used - 1) x W_j (line 27; the paper gives no number: default 0).
Each candidate's cost is sum_h sum_r k_h^r(gamma) w_h^r at the current prices (line 26), and its
payoff is phi = U_j(estimated JCT) - cost, the JCT estimated as if the job kept the candidate's
rate from slot t on (Eq. (4)'s f_js). Line 28 keeps the *cheapest* candidate (``select="min-cost"``,
the printed rule; ``"max-payoff"`` keeps the best phi, Eq. (4) itself); line 29-33: mu_j = phi,
and the job is allocated only if mu_j > 0.

DP_allocation (lines 1-21) decides, job by job in queue order, to allocate (updating gamma, the
prices (5) and the free GPUs) or to skip, and compares the two branches. **As printed it compares
costs** (cost_Q vs cost_{Q/j}), which always prefers skipping every job (cost 0). We compare the
sum of payoffs instead -- the dual quantity the primal-dual argument maximizes -- and say so in
proofs/hadar_theorem1.md. Results are memoized on (job index, free GPUs), as the paper says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hetsched.hadar import dp_kernel, plan_kernel
from hetsched.hadar.arrays import HadarView
from hetsched.hadar.job_table import JobTable
from hetsched.hadar.slot import Alloc, Candidate, Prices, Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.utility import utility

__all__ = ["Alloc", "Candidate", "DpPlan", "dp_allocation", "find_alloc"]


def canonical_order(free: np.ndarray, machine_class: np.ndarray) -> np.ndarray:
    """The order in which FIND_ALLOC visits the machines at ``free`` ([h, r] GPU counts): each
    capacity class keeps its index positions, filled by its machines most free first (rows
    descending lexicographically, then by index). Position p visits machine ``order[p]``; it
    depends on the machines' states, not their names (:mod:`hetsched.hadar.find_kernel`)."""
    order = np.arange(len(machine_class))
    for c in np.unique(machine_class):
        members = np.flatnonzero(machine_class == c)
        order[members] = sorted(members, key=lambda h: ([-int(x) for x in free[h]], h))
    return order


def find_alloc(
    view: HadarView,
    j: int,
    free: np.ndarray,
    allocated: np.ndarray,
    prices: Prices,
    remaining: float,
    t: int,
    utility_name: str | None = None,
    comm_cost: float = 0.0,
    select: str = "min-cost",
) -> Candidate | None:
    """FIND_ALLOC (lines 22-34), as printed; ``free`` and ``allocated`` are [h, r] GPU counts.
    The searches run a compiled one (:func:`hetsched.hadar.find_kernel.find`) that returns the
    same candidate; this literal version is its reference in the tests. Identical machines are
    visited most free first (:func:`canonical_order`; the paper leaves the order open)."""
    need = int(view.workers[j])
    visit = canonical_order(free, view.machine_class).tolist()
    order = [r for r in np.argsort(-view.throughput[j], kind="stable") if view.throughput[j, r] > 0]
    cands: list[Candidate] = []

    def take(machines: list[int], types: list[int]) -> Alloc | None:
        left, out = need, []
        for r in types:  # fastest type first
            for h in machines:
                n = min(left, int(free[h, r]))
                if n > 0:
                    out.append((h, r, n))
                    left -= n
                if left == 0:
                    return tuple(out)
        return None

    def candidate(alloc: Alloc | None, extra: float) -> None:
        if alloc is None:
            return
        kinds = sorted({r for _, r, _ in alloc})
        rate = view.rate(j, kinds, need)
        cost = (
            sum(prices.price(allocated[h, r], view.capacity[h, r]) * n for h, r, n in alloc) + extra
        )
        slots = math.ceil(remaining / rate - 1e-12)
        jct = view.jct(j, t + slots - 1)
        cands.append(Candidate(alloc, rate, cost, utility(view, utility_name, j, jct) - cost))

    for q in range(1, len(order) + 1):
        types = order[:q]
        for h in visit:  # consolidated
            candidate(take([h], types), 0.0)
        spread = take(visit, types)
        if spread is not None:
            machines_used = len({h for h, _, _ in spread})
            candidate(spread, comm_cost * (machines_used - 1) * need)
    if not cands:
        return None
    best = (
        min(cands, key=lambda c: (c.cost, -c.payoff))
        if select == "min-cost"
        else max(cands, key=lambda c: c.payoff)
    )
    return best if best.payoff > 0 else None


class OverBudget(Exception):
    """The DP met more than its state budget of memoized states (:func:`dp_allocation`)."""

    def __init__(self, budget: int):
        self.budget = budget
        super().__init__(f"DP_allocation needs more than {budget:,} states")


def dp_allocation(
    slot: Slot,
    stats: dict | None = None,
    state_budget: int | None = None,
    utility_name: str | None = None,
    comm_cost: float = 0.0,
    select: str = "min-cost",
) -> tuple[float, dict[int, Candidate]]:
    """DP_allocation (lines 1-21): the subset of ``queue`` and their gangs with the largest total
    payoff over the states (index, free GPUs), compiled (:func:`hetsched.hadar.dp_kernel.dp`).
    Returns (total payoff, job -> candidate); ``stats`` receives the number of memoized states.
    With ``state_budget``, raises :class:`OverBudget` if the DP would meet more states than
    that (it may need up to n(Q) x prod_{h,r}(c_h^r + 1); proofs/hadar_theorem1.md), known before
    their values are computed (:func:`hetsched.hadar.dp_kernel.reach`)."""
    arrays = SlotArrays.of(slot, utility_name, comm_cost, select)
    budget = -1 if state_budget is None else int(state_budget)
    value, taken, states, over = dp_kernel.dp(
        arrays.free0, arrays.find_args(), *arrays.key_args(), arrays.classes(), budget
    )
    if over:
        raise OverBudget(budget)
    if stats is not None:
        stats["states"] = int(states)
    return float(value), arrays.chosen(taken)


#: a plan serves a queue of at least this share of its own (a shorter one is reached anew:
#: the vectors only the lost jobs reach cost the value loop, and a new reach drops them)
KEEP = 0.9


@dataclass
class DpPlan:
    """DP_allocation's states for one queue, kept from slot to slot.

    Under the min-cost rule the gang FIND_ALLOC gives a job depends on the free GPUs, the
    prices and the job's class alone (:func:`hetsched.hadar.dp_kernel.reach`), not on its
    utility. So the free-GPU vectors the DP reaches, and every take between them, are the same
    in every slot with the same queue (classes in order), the same prices and the same free
    GPUs; only the utilities change as the jobs progress. :meth:`solve` reaches them once (with
    every take followed whatever its payoff: a superset of the literal DP's states, whose values
    are the same) and solves each such slot by the DP's value loop alone. The prices (6)-(7)
    depend on the queue's jobs, not on their progress.

    A plan also serves a queue that only lost jobs: a path of takes in the shorter queue is one
    in the plan's queue with the lost jobs skipped, so every free-GPU vector the shorter queue
    reaches is in the plan, and the first index at which it is reached is at least the plan's,
    counted in the jobs left. Jobs that arrive extend the plan (their takes only); a queue
    shorter than ``keep`` of the plan's is compacted to the plan a new reach would give, from
    the plan's takes (:func:`hetsched.hadar.plan_kernel.compact`); new prices make a new
    plan. One plan is kept, the last one. A job's class is its class id in the slot's job table
    (:class:`hetsched.hadar.job_table.JobTable`, the same table from slot to slot: the plan's
    own of the whole view in :meth:`solve`, the online run's in the policy); a plan numbers the
    classes it meets in the order it meets them."""

    state_budget: int  #: the most states a plan may have; a slot over it is not solved
    keep: float = KEEP  #: the shortest queue a plan serves, as a share of its own
    key: tuple = ()  # what the plan was reached for, its queue apart
    job_table: JobTable | None = None  # the table whose class ids ``gids`` are
    gids: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # queue's classes
    plan_class: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # id -> class
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # queue's plan classes
    found: tuple | None = None  # reach's (k_min, head, link, take, slow_of, cost_of); None: over
    table: tuple | None = None  # the plan as :func:`dp_kernel.sweep` extends it; None: over
    states: int = 0  # the plan's states
    reaches: list[int] = field(default_factory=list)  # each new plan's states, in order
    extensions: int = 0  # plans extended by jobs that arrived
    compactions: int = 0  # plans compacted to a queue that lost jobs (:meth:`_compact`)
    buffer: np.ndarray = field(default_factory=lambda: np.empty(0))  # the values' array, reused
    last: tuple | None = None  # the last call's (classes, k_min); None: over the budget
    layout: tuple[int, int] = (1, 1)  # the plan's :meth:`SlotArrays.key_args`

    def solve(
        self, slot: Slot, utility_name: str | None = None, comm_cost: float = 0.0
    ) -> tuple[float, dict[int, Candidate]] | None:
        """DP_allocation's optimum of ``slot`` under the min-cost rule (the value and choice of
        :func:`dp_allocation`), or None if the slot's plan has more than ``state_budget`` states."""
        table = self.job_table
        if table is None or table.view is not slot.view or table.utility_name != utility_name:
            table = JobTable.of(slot.view, utility_name)  # every job's row: ids across slots
        arrays = SlotArrays.of(slot, utility_name, comm_cost, "min-cost", table=table)
        solved = self.solve_arrays(arrays)
        return None if solved is None else (solved[0], arrays.chosen(solved[1]))

    def solve_arrays(self, arrays: SlotArrays, new: bool = True) -> tuple[float, np.ndarray] | None:
        """:meth:`solve` on the slot's arrays (min-cost rule): (value, queue positions taken).
        ``new`` False: only if the plan serves the queue as it is or extended (else None, and
        the plan is left as it was)."""
        if not arrays.min_cost:
            raise ValueError("a DpPlan serves the min-cost rule only")
        key = tuple(
            np.ascontiguousarray(a).tobytes()
            for a in (arrays.free0, arrays.cap, arrays.mclass, arrays.price)
        ) + (arrays.comm_cost, id(arrays.table))
        gids = arrays.table.class_id[arrays.at]
        kept = self._kept(key, gids)
        if kept is None and self._extend(key, gids, arrays):
            kept = self.last
        if kept is None and not new:
            return None
        if kept is None and self._compact(key, gids, arrays):  # a new plan, from the last
            kept = self.last
        if kept is None:
            self.found = self.table = None  # the old plan goes before the new one is built
            classes = arrays.classes()
            self.job_table = arrays.table
            self.plan_class = np.full(int(arrays.table.class_id.max(initial=-1)) + 1, -1)
            self.plan_class[gids] = classes
            self._sweep(key, gids, classes, classes, arrays, new=True)
            self.last = None if self.found is None else (classes, self.found[0])
        else:
            self.last = kept if self.found is not None else None
        return self.solve_again(arrays)

    def solve_again(self, arrays: SlotArrays) -> tuple[float, np.ndarray] | None:
        """:meth:`solve_arrays` for a later slot of the queue of the last call (so the same
        prices and free GPUs: :meth:`SlotArrays.with_progress`): the value loop alone."""
        if self.last is None:
            return None
        classes, k_min = self.last
        value, taken, self.buffer = dp_kernel.values(
            arrays.util, classes, k_min, *self.found[1:], self.buffer
        )
        return float(value), taken

    def _sweep(
        self, key: tuple, gids: np.ndarray, classes: np.ndarray, current: np.ndarray, arrays,
        new: bool,
    ) -> None:  # fmt: skip
        """Reach the plan of the queue of class ids ``gids`` (``classes``: their plan classes),
        from a new root or from the plan as it is (an extension: only the classes of the jobs
        past the plan's have takes to find), within the budget; ``current``: the plan classes
        of ``arrays``' queue, whose jobs stand for their classes in FIND_ALLOC."""
        n_cls = max(int(self.plan_class.max(initial=-1)) + 1, 1)
        rep = dp_kernel.class_chains(current, n_cls)[0]  # a job of each class in ``arrays``
        todo = np.ones(n_cls, dtype=np.bool_)
        if not new:
            todo[:] = False
            todo[classes[len(self.gids) :]] = True
        else:
            self.layout = arrays.key_args()  # the same in every extension (the key has the cap)
        bits, n_words = self.layout
        table = self.table
        if new:
            table = dp_kernel.start(arrays.free0, bits, n_words, n_cls, arrays.mclass)
        count, over, table = dp_kernel.sweep(
            table,
            arrays.find_args(),
            bits,
            n_words,
            classes,
            rep,
            todo,
            int(self.state_budget),
            False,
        )
        self.key, self.gids, self.ids, self.states = key, gids, classes, int(count)
        if new:
            self.reaches.append(self.states)
        else:
            self.extensions += 1
        if over:
            self.found = self.table = None
            return
        self.table = table
        k_min = dp_kernel.first_indices(table)
        self.found = (k_min, table[9], table[5], table[6], table[7], table[8])

    def _extend(self, key: tuple, gids: np.ndarray, arrays: SlotArrays) -> bool:
        """Extend the plan to serve a queue of class ids ``gids`` that is the plan's with jobs
        removed and jobs appended (within the share ``keep`` of the extended queue and the
        budget), and make it the last call's; False if it cannot."""
        if key != self.key or self.table is None or not len(self.gids):
            return False
        current = self.plan_class[gids]
        j = int(dp_kernel.matched(self.ids, current)[-1])
        if j == len(gids) or len(gids) < self.keep * (len(self.gids) + len(gids) - j):
            return False
        unmet = gids[j:][current[j:] < 0]  # classes first met: numbered in order of meeting
        if len(unmet):
            ids, first = np.unique(unmet, return_index=True)
            ids = ids[np.argsort(first)]
            self.plan_class[ids] = np.arange(len(ids)) + int(self.plan_class.max()) + 1
            current = self.plan_class[gids]
        longer = np.concatenate([self.gids, gids[j:]])
        classes = np.concatenate([self.ids, current[j:]])
        self._sweep(key, longer, classes, current, arrays, new=False)
        if self.found is None:
            return False
        self.last = (current, dp_kernel.matched(classes, current)[self.found[0]])
        return True

    def _compact(self, key: tuple, gids: np.ndarray, arrays: SlotArrays) -> bool:
        """The plan of a queue of class ids ``gids`` whose first jobs are the plan's queue with
        jobs removed, from the plan's takes (:func:`hetsched.hadar.plan_kernel.compact`: the
        plan a new sweep would reach, without FIND_ALLOC), extended by the jobs after them, and
        made the last call's; False if the plan has no such part."""
        if key != self.key or self.table is None or not len(self.gids):
            return False
        current = self.plan_class[gids]
        j = int(dp_kernel.matched(self.ids, current)[-1])
        if j == 0:
            return False
        states, k_min, table = plan_kernel.compact(self.table, current[:j], *self.layout)
        self.table, self.gids, self.ids, self.states = table, gids[:j], current[:j], int(states)
        self.found = (k_min, table[9], table[5], table[6], table[7], table[8])
        self.compactions += 1
        if j < len(gids):
            return self._extend(key, gids, arrays)
        self.last = (current, k_min)
        return True

    def _kept(self, key: tuple, gids: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """If the plan serves a queue of class ids ``gids`` (the same key, the plan's queue with
        jobs removed): each job's class in the plan and each vector's first index, counted in
        the jobs left. Else None."""
        n = len(self.gids)
        if key != self.key or len(gids) > n or len(gids) < self.keep * n:
            return None
        if self.found is None:  # over the budget: a shorter queue may fit, so reach it again
            return None if not np.array_equal(gids, self.gids) else (np.empty(0, np.int64), None)
        classes = self.plan_class[gids]
        before = dp_kernel.matched(self.ids, classes)
        if before[-1] < len(gids):  # not a subsequence: a job arrived
            return None
        return classes, before[self.found[0]]
