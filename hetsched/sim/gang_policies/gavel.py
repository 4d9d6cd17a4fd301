"""Gavel (Narayanan et al., OSDI'20) round-based scheduling with one of its heterogeneity-aware
allocation policies. Whenever the set of active jobs changes, the allocation LP is solved for
them (x_{j,r}: the share of time job j should spend on type r) and checked by the allocation
validator; each round, Gavel's mechanism (:func:`hetsched.allocation.rounds.priority_placement`)
gives type r to the jobs with the highest x_{j,r} / (share of their rounds spent on r so far).

Allocation policies (``gavel:NAME``): ``max-min-fairness-perf`` (default: Gavel's
heterogeneity-aware LAS), ``max-min-fairness`` (the heterogeneity-agnostic LAS: equal time
shares), ``makespan`` (needs the remaining work: clairvoyant), solved by the fast LP path
(:mod:`hetsched.allocate.fast`). Priorities count rounds since a job arrived (Gavel resets them
when the allocation changes; we keep each job's history). Not modelled: Gavel's water-filling
refinement of max-min fairness (the LP's optimum may leave slack above the minimum) and its
space sharing (packing two jobs on one GPU, ``gavel-*-packed`` in ``hetsched allocate``)."""

from __future__ import annotations

import numpy as np

from hetsched.allocate.fast import solve_max_min
from hetsched.allocation.policies import FAST_POLICIES, coefficients
from hetsched.allocation.problem import AllocationView
from hetsched.allocation.rounds import priority_placement
from hetsched.allocation.validate import check_allocation
from hetsched.errors import HetschedError, InputError
from hetsched.sim.gang_engine import GangState
from hetsched.solvers.result import Status


class Gavel:
    def __init__(self, allocation: str = "max-min-fairness-perf", seed: int = 0):
        if allocation not in FAST_POLICIES:
            raise InputError(
                "policy",
                "gavel:ALLOCATION",
                f"one of {', '.join(FAST_POLICIES)}, not {allocation!r}",
            )
        self.allocation = allocation
        self.name = "gavel" if allocation == "max-min-fairness-perf" else f"gavel:{allocation}"
        self.clairvoyant = allocation == "makespan"
        self.lp_solves = 0

    def prepare(self, instance, jobs) -> None:
        self.data = jobs
        # Gavel runs a gang on one type: a type with fewer GPUs than the gang cannot hold the job
        self.thr = np.where(jobs.type_count()[None, :] >= jobs.gang[:, None], jobs.throughput, 0.0)
        for j in np.flatnonzero(~np.any(self.thr > 0, axis=1)):
            raise InputError(
                instance.name,
                f"$.jobs[{j}].requested_workers",
                f"Gavel runs a gang on one GPU type; no type has {jobs.gang[j]} GPUs the job can use",
            )
        self.received = np.zeros((jobs.n_jobs, len(jobs.types)))
        self.elapsed = np.zeros(jobs.n_jobs)
        self.active_set: tuple[int, ...] = ()
        self.x = np.zeros((0, len(jobs.types)))

    def _solve(self, state: GangState, active: list[int]) -> None:
        d = self.data
        steps = (
            np.array([state.remaining(j) for j in active])
            if self.clairvoyant
            else np.full(len(active), np.nan)
        )
        view = AllocationView(
            tuple(d.job_ids[j] for j in active),
            d.types,
            d.type_count().astype(float),
            self.thr[active],
            d.gang[active].astype(float),
            d.weight[active],
            steps,
            np.full(len(d.types), np.nan),
        )
        status, _, x, _ = solve_max_min(coefficients(view, self.allocation), view.scale, view.count)
        bad = check_allocation(view, x)
        if status != Status.OPTIMAL or bad:
            raise HetschedError(
                f"gavel allocation LP failed at t={state.now}: {status.value}, "
                + "; ".join(v.message for v in bad[:3])
            )
        self.x = x
        self.lp_solves += 1

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        d = self.data
        active = state.active()
        if tuple(active) != self.active_set:
            self._solve(state, active)
            self.active_set = tuple(active)
        share = self.received[active] / np.maximum(1.0, self.elapsed[active])[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(share > 0, self.x / np.where(share > 0, share, 1.0), np.inf)
        p = np.where((self.x > 1e-9) & (self.thr[active] > 0), p, -np.inf)
        free = {
            t: [g for g in range(d.n_gpus) if d.gpu_type[g] == r] for r, t in enumerate(d.types)
        }
        previous = {
            i: (d.types[d.gpu_type[state.held[j][0]]], state.held[j])
            for i, j in enumerate(active)
            if j in state.held
        }
        placed = priority_placement(p, d.gang[active], d.types, free, previous)
        self.elapsed[active] += 1
        plan = {}
        for i, (t, gpus) in placed.items():
            self.received[active[i], d.types.index(t)] += 1
            plan[active[i]] = tuple(gpus)
        return plan
