"""Hadar's online Algorithm 1 (:mod:`hetsched.hadar.online`) as a simulator policy: every round,
the active jobs (arrival order) are re-allocated from scratch by DP_allocation at the current
prices (5)-(8), solved exactly. ``hadar`` solves each slot by the DP over a plan kept while the
queue loses jobs and extended by those that arrive
(:class:`hetsched.hadar.dp_allocation.DpPlan`), within ``plan_budget`` states; only a slot over
that budget takes the choice of a branch and bound
(:func:`hetsched.hadar.branch_and_bound.dp_allocation_bnb`) stopped after ``node_limit`` nodes
(20,000 or ``hadar:bnb:NODES``: a node budget, not a time limit, so that runs are deterministic;
``round_time_limit`` is only a guard), unproven unless the search ends. A slot whose queue is the
last slot's keeps its arrays but the utilities, its prices and, where the plan solved it, goes
to the plan's value loop first; the same choice keeps its gangs and GPUs (each slot is still
solved and proven: nothing carries over but what depends on the queue alone). ``hadar:dp`` is
the paper's literal memoized DP, within a budget of ``state_budget`` memoized states per slot: a
slot whose DP would need more takes the branch and bound's decision instead and is counted as
over budget. :meth:`Hadar.solver_stats` (the run's ``solver`` entry in ``hetsched simulate
--json``) counts the slots, the slots whose choice is proven optimal for DP_allocation's
objective (by the DP, or by a branch and bound that ended) and those over budget.

The Hadar view is built from the simulator's gang data: slots are the simulator's rounds,
X_j^r the whole gang's throughput with Hadar's bottleneck progress (so Hadar's rate estimates
are the simulator's rates), W_j the remaining work (clairvoyant, as the paper assumes), and the
horizon T the last arrival plus every job run alone on its slowest type, one after another. The
chosen (machine, type, count) triples become concrete GPUs, keeping the job's GPUs of last round
where they fit (a move costs a restore). Each slot is solved on the whole cluster free, so its
decision is one up to relabelling identical machines (FIND_ALLOC visits them by state, not by
name): the relabelling that keeps the most GPUs where their jobs ran is taken
(:func:`hetsched.sim.gang_policies.cell_gpus.relabel`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from hetsched.core.errors import InputError
from hetsched.hadar.branch_and_bound import dp_allocation_bnb, search_slot
from hetsched.hadar.dp_allocation import DpPlan, OverBudget, dp_allocation
from hetsched.hadar.job_table import JobTable
from hetsched.hadar.price import prices_of_terms
from hetsched.hadar.slot import Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.view import HadarView
from hetsched.instance.extensions import HadarOptions
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_policies.cell_gpus import CellGpus

#: states a slot's DP may have under ``hadar:dp`` before the slot takes the branch and bound's
#: decision: twice the most any slot of the 1-GPU 480-job Philly windows needs (101,428 with
#: arrivals, 111,668 static), whose runs the budget therefore leaves exact. Set when the DP took
#: 10-20 us a state (2.5-5 CPU s a slot); compiled over the free-GPU vectors it takes 0.1-1 us,
#: and a slot over the budget is known after counting its states, before solving them
DP_STATE_BUDGET = 250_000
#: states of ``hadar``'s plan, the DP of every slot under it: above every
#: slot of the multi-GPU Philly window (40.4 million at 480 queued jobs); about 0.5 GB there
PLAN_STATE_BUDGET = 50_000_000


@dataclass(frozen=True)
class _Last:
    """``hadar``'s last slot: its queue, arrays, the positions taken, their gangs and GPUs, and
    how they were chosen."""

    queue: list[int]
    arrays: SlotArrays
    taken: np.ndarray
    gangs: tuple[np.ndarray, np.ndarray, np.ndarray]  # SlotArrays.gangs of ``taken``
    plan: dict[int, tuple[int, ...]]
    by_plan: bool  # chosen by the plan's DP


class Hadar:
    clairvoyant = True

    def __init__(
        self,
        solver: str = "bnb",
        node_limit: int = 20_000,
        round_time_limit: float = 60.0,
        eta: float = 1.0,
        seed: int = 0,
        state_budget: int = DP_STATE_BUDGET,
        plan_budget: int = PLAN_STATE_BUDGET,
    ):
        solver, _, nodes = solver.partition(":")  # hadar:SOLVER[:NODES]
        if solver not in ("bnb", "dp"):
            raise InputError("policy", "hadar:SOLVER", f"'bnb' or 'dp', not {solver!r}")
        if nodes:
            if not nodes.isdigit() or int(nodes) < 1:
                raise InputError(
                    "policy", "hadar:SOLVER:NODES", f"a whole number of nodes >= 1, not {nodes!r}"
                )
            node_limit = int(nodes)
        self.solver, self.node_limit, self.round_time_limit, self.eta = (
            solver,
            node_limit,
            round_time_limit,
            eta,
        )
        self.state_budget = state_budget
        if nodes:
            self.name = f"hadar:{solver}:{node_limit}"
        else:
            self.name = "hadar" if solver == "bnb" else f"hadar:{solver}"
        self.slots = 0
        self.unproven_rounds = 0  # slots whose choice is not proven optimal
        self.over_budget = 0  # hadar:dp's slots past the state budget
        self.nodes = 0  # branch-and-bound nodes over the run
        self.plan = DpPlan(plan_budget)  # hadar: the DP where the branch and bound stops
        self.proven_by_dp = 0  # hadar: slots the branch and bound left, proven by the plan
        self.last: _Last | None = None  # hadar: the last slot, for the next one of its queue

    def solver_stats(self) -> dict:
        """How each slot's DP_allocation was solved, for the run's summary."""
        out = {
            "method": "DP_allocation by "
            + (
                "memoized DP"
                if self.solver == "dp"
                else "the DP over plans kept across slots, a branch and bound over the plan budget"
            ),
            "slots": self.slots,
            "proven_slots": self.slots - self.unproven_rounds,
            "branch_and_bound_nodes": self.nodes,
            "node_limit": self.node_limit,
        }
        if self.solver == "dp":
            out |= {"dp_over_budget": self.over_budget, "state_budget": self.state_budget}
        else:
            out |= {
                "proven_by_dp": self.proven_by_dp,
                "dp_plans": len(self.plan.reaches),
                "dp_plan_extensions": self.plan.extensions,
                "dp_plan_compactions": self.plan.compactions,
                "dp_over_budget": self.over_budget,
                "state_budget": self.plan.state_budget,
            }
        return out

    def _plan_then_bnb(self, arrays: SlotArrays, by_plan: bool = False) -> tuple[np.ndarray, bool]:
        """The queue positions taken, and whether the plan's DP chose them: the plan's DP (its
        value loop alone where ``by_plan``: the slot follows one of the same queue that the plan
        solved; else the plan as it is, extended, or a new one); over the plan's budget, the
        branch and bound's choice with ``node_limit`` nodes (unproven unless that search ends).
        Gangs are found for the choice only. (A branch and bound of 100 nodes before each new
        plan went on 2026-12-07: it spared few plans once identical machines were merged;
        ``docs/reproduction.md``, the multi-GPU window.)"""
        solved = self.plan.solve_again(arrays) if by_plan else self.plan.solve_arrays(arrays)
        if solved is not None:
            self.proven_by_dp += 1
            return solved[1], True
        self.over_budget += 1
        deadline = time.perf_counter() + self.round_time_limit
        _, taken, _, proven, nodes = search_slot(arrays, self.node_limit, deadline)
        self.nodes += int(nodes)
        self.unproven_rounds += not proven
        return taken, False

    def prepare(self, instance, jobs) -> None:
        self.data = jobs
        # remaining work, one array over the trace written for the active jobs only (the
        # searches read no other entry): a slot costs its queue, not every job of the trace
        self.remaining = np.zeros(jobs.n_jobs)
        self.utility = (instance.extensions.hadar or HadarOptions()).utility
        # the GPUs of each (machine, type) cell, in index order: a gang's GPUs come from these
        self.cells = CellGpus.of(jobs.gpu_server, jobs.gpu_type, len(jobs.servers), len(jobs.types))

    def _view(self, state: GangState) -> HadarView:
        d, L = self.data, state.round_seconds
        cap = np.zeros((len(d.servers), len(d.types)), dtype=np.int64)
        np.add.at(cap, (d.gpu_server, d.gpu_type), 1)
        arrival = np.floor(d.arrival / L).astype(np.int64) + 1
        slowest = [
            math.ceil(d.work[j] / (d.throughput[j][d.throughput[j] > 0].min() * L))
            for j in range(d.n_jobs)
        ]
        horizon = int(arrival.max()) + int(sum(slowest))
        return HadarView(
            d.job_ids,
            d.servers,
            d.types,
            cap,
            arrival,
            d.gang.copy(),
            d.work.astype(float),
            d.throughput,
            L,
            horizon,
            "bottleneck",
            self.utility,
        )

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        if not hasattr(self, "view"):
            self.view = self._view(state)
            self.table = JobTable.of(self.view)  # what a slot reads of a job, once per job
        v = self.view
        queue = state.active()
        remaining = self.remaining
        remaining[queue] = state.remaining_of(queue)
        last = self.last
        same = last is not None and last.queue == queue
        if same:  # a slot of the same queue: the same prices (6)-(7), new utilities
            prices = last.arrays.slot.prices
        else:  # (6)-(7) over the queue, from each job's terms (worked out once)
            t = self.table
            at = t.at(queue)
            prices = prices_of_terms(t.u_max_term[at], t.u_min_term[at], self.eta)
        slot = Slot(v, queue, prices, remaining, state.round + 1)
        self.slots += 1
        if self.solver == "dp":
            self.last = None
            try:
                _, chosen = dp_allocation(slot, state_budget=self.state_budget)
            except OverBudget:
                self.over_budget += 1
                res = dp_allocation_bnb(
                    slot, node_limit=self.node_limit, time_limit=self.round_time_limit
                )
                self.unproven_rounds += not res.proven
                self.nodes += res.nodes
                chosen = res.chosen
            jobs = np.array(sorted(chosen), dtype=np.int64)
            rows = [row for j in jobs.tolist() for row in chosen[j].alloc]
            count = np.array([len(chosen[j].alloc) for j in jobs.tolist()], dtype=np.int64)
            rows = np.array(rows, dtype=np.int64)
            return self.cells.place(jobs, count, rows, state.held, v.machine_class)
        if same:
            arrays = last.arrays.with_progress(slot)
        else:
            like = None if last is None else last.arrays
            arrays = SlotArrays.of(slot, like=like, table=self.table)
        taken, by_plan = self._plan_then_bnb(arrays, same and last.by_plan)
        if same and np.array_equal(taken, last.taken):
            # the same jobs at the same free GPUs and prices: FIND_ALLOC's gangs (min-cost)
            # are the last slot's, and so are their GPUs if the jobs hold what they were given
            gangs = last.gangs
            plan = (
                dict(last.plan)
                if state.held == last.plan
                else self.cells.place(*gangs, state.held, v.machine_class)
            )
        else:
            gangs = arrays.gangs(taken)
            plan = self.cells.place(*gangs, state.held, v.machine_class)
        self.last = _Last(queue, arrays, taken, gangs, plan, by_plan)
        return plan
