"""Gavel (Narayanan et al., OSDI'20) round-based scheduling with one of its heterogeneity-aware
allocation policies. Whenever the set of active jobs changes, the allocation LP is solved for
them (x_{j,r}: the share of time job j should spend on type r) and checked by the allocation
validator; each round, Gavel's mechanism (:func:`hetsched.gavel.rounds.place_indexed`)
gives type r to the jobs with the highest x_{j,r} / (share of their rounds spent on r so far).

Allocation policies (``gavel:NAME``): ``max-min-fairness-perf`` (default: Gavel's
heterogeneity-aware LAS), ``max-min-fairness`` (the heterogeneity-agnostic LAS: equal time
shares), ``makespan`` and ``min-total-duration`` (Gavel's min_total_duration_perf and its
agnostic form), ``finish-time-fairness`` (Themis's rho, bisected; these three need the remaining
work: clairvoyant, as Gavel's simulator is) and ``max-throughput``, solved by the fast LP path
(:mod:`hetsched.gavel.fast`). Priorities count rounds since a job arrived (Gavel resets them
when the allocation changes; we keep each job's history). Not modelled: Gavel's water-filling
refinement of max-min fairness (the LP's optimum may leave slack above the minimum) and its
space sharing (packing two jobs on one GPU, ``gavel-*-packed`` in ``hetsched allocate``).
Under our convention the max-min policies take, among the LP's optima, one of most total
normalized throughput (the agnostic ones: of the speed-aware coefficients,
:data:`AWARE_TIEBREAK`), and max-throughput a vertex of its LP, by a dense simplex with a dual
certificate on a short queue (:mod:`hetsched.solvers.dense_simplex`, :data:`SMALL_LP`);
finish-time fairness solves its bisection's LP tests the same way and applies the tie-break to
the allocation it keeps.

Under the engine's Gavel convention (``GangState.convention == "gavel"``, the default on
``gavel-trace:`` workloads) the policy follows Gavel's own simulator instead: allocations
recomputed at most every 1920 s, priorities from each type's time shares with deficits as
tie-breaks, and leftover GPUs filled with any job that can run there
(:mod:`hetsched.sim.gang_policies.gavel_mechanism`), and the LPs take Gavel's normalizers
(:mod:`hetsched.gavel.conventions`) and are solved to an interior optimum, as Gavel's ECOS
solves them (:func:`lp_method`). The heterogeneity-agnostic allocation
(``max-min-fairness``) visits the GPU types in a seeded random order each round, as Gavel does."""

from __future__ import annotations

import random

import numpy as np

from hetsched.core.errors import HetschedError, InputError
from hetsched.gavel.conventions import isolated_throughput
from hetsched.gavel.fast import solve_max_min, solve_max_sum
from hetsched.gavel.ftf import bisect_rho, fast_test
from hetsched.gavel.policies import (
    FAST_POLICIES,
    coefficients,
    denominators,
    throughput_coefficients,
)
from hetsched.gavel.problem import AllocationView
from hetsched.gavel.rounds import place_indexed, previous_arrays, priorities
from hetsched.gavel.validate import check_allocation
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_policies.gavel_mechanism import GavelMechanism, type_order
from hetsched.solvers.result import Status

#: the allocation policies the simulated gavel policy takes
SIM_POLICIES = FAST_POLICIES + ("max-throughput", "finish-time-fairness")
#: the most active jobs whose allocation LP (under our convention, of every policy) goes to
#: the dense simplex (:mod:`hetsched.solvers.dense_simplex`), one
#: row pair per job, solved afresh at each change. CPU per solve, 3 GPU types, distinct rows (2026-11-27): 18 jobs 36 us
#: (HiGHS took 0.2 ms warm, 2 ms cold through highspy), 64 jobs 0.5 ms (HiGHS's interior point
#: 4.6 ms), 128 jobs 2.4 ms (7.4 ms), 190 jobs 7.7 ms (8.9 ms). Past it (gavel-poisson's backlog
#: of ~1,000 jobs) the cold LP over merged classes of identical jobs goes to HiGHS
SMALL_LP = 128
#: the agnostic max-min policies (every GPU type weighed alike: a huge optimal face, on which
#: the type each job gets is arbitrary) and the speed-aware policy whose coefficients break
#: their ties under our convention: among the agnostic optima, the allocation the aware
#: policy values most (the most normalized throughput; for min-total-duration, the most
#: progress on the makespan's scale). Until session 57 they kept HiGHS's cold vertex over
#: merged classes, whose type per job is an accident of its pivots, at 1.5 ms a solve: 52 CPU s
#: for 10,000 stable jobs (min-total-duration), against 4 s for ``gavel``. Average JCT on
#: 3,000 stable jobs, HiGHS's vertex -> the aware tie-break: see docs/benchmarks.md
#: ("Gavel's agnostic policies and max-throughput")
AWARE_TIEBREAK = {"max-min-fairness": "max-min-fairness-perf", "min-total-duration": "makespan"}
#: the ones that read each job's remaining steps (clairvoyant, as Gavel's simulator is)
CLAIRVOYANT = ("makespan", "min-total-duration", "finish-time-fairness")


def _floats(v: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(v, dtype=float)


def lp_method(convention: str) -> tuple[str, bool]:
    """How the allocation LPs are solved (a method of :data:`hetsched.gavel.fast.LP_METHODS`,
    and whether identical jobs are merged): under Gavel's convention the whole LP, one row per
    job, stopped at the interior point (Gavel's cvxpy + ECOS returns a point inside the optimal
    face, near its analytic centre, where identical jobs get identical shares); under ours
    HiGHS's vertex over merged classes (the decomposition finds another optimum of the same
    value, and the rounds' priorities follow the allocation). Under ours, the LP of a short
    queue goes to the dense simplex instead (:data:`SMALL_LP`)."""
    return ("interior", False) if convention == "gavel" else ("ipm", True)


class Gavel:
    def __init__(self, allocation: str = "max-min-fairness-perf", seed: int = 0):
        if allocation not in SIM_POLICIES:
            raise InputError(
                "policy",
                "gavel:ALLOCATION",
                f"one of {', '.join(SIM_POLICIES)}, not {allocation!r}",
            )
        self.allocation = allocation
        self.name = "gavel" if allocation == "max-min-fairness-perf" else f"gavel:{allocation}"
        self.clairvoyant = allocation in CLAIRVOYANT
        self.lp_solves = 0
        self.seed = seed
        self.dense_solves = 0  # LPs the dense simplex solved (certified)
        self.dense_declined = 0  # ... and those it left to HiGHS

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
        self._type_gpus = np.full((len(jobs.types), max(map(len, jobs.gpus_of_type))), -1)
        for r, gpus in enumerate(jobs.gpus_of_type):
            self._type_gpus[r, : len(gpus)] = gpus
        self._count = jobs.type_count().astype(float)
        self._scale = jobs.gang.astype(float)
        self._no_cost = np.full(len(jobs.types), np.nan)
        self.received = np.zeros((jobs.n_jobs, len(jobs.types)))
        self.elapsed = np.zeros(jobs.n_jobs)
        self.active_set: tuple[int, ...] = ()
        self.x = np.zeros((0, len(jobs.types)))
        self.mechanism: GavelMechanism | None = (
            None  # set on the first round under Gavel's convention
        )
        self.shuffler = random.Random(self.seed + 5)  # Gavel seeds its type shuffler with seed + 5
        self.last_plan: dict[int, tuple[int, ...]] = {}
        self.last_executed: dict[int, float] = {}
        # finish-time fairness, Gavel's convention: I_j, the isolated time of the work done
        # between allocations (its _cumulative_isolated_time), and the last allocation's numbers
        self.isolated_time = np.zeros(jobs.n_jobs)
        self.last_steps: dict[int, tuple[float, float]] = {}  # j -> (remaining, iso throughput)

    def _solve(self, state: GangState, active: list[int], rows: np.ndarray) -> np.ndarray:
        """The allocation LP of the jobs ``active`` (``rows``: the same indices as an array)."""
        d = self.data
        steps = (
            np.array([state.remaining(j) for j in active])
            if self.clairvoyant
            else np.full(len(active), np.nan)
        )
        view = AllocationView(
            tuple([d.job_ids[j] for j in active]),
            d.types,
            self._count,
            self.thr[rows],
            self._scale[rows],
            d.weight[rows],
            steps,
            self._no_cost,
        )
        method, merge = lp_method(state.convention)
        ours = state.convention != "gavel"
        dense = ours and len(active) <= SMALL_LP
        if dense:
            method, merge = "dense", False
        declined: list[str] = []
        if self.allocation == "finish-time-fairness":
            status, x = self._ftf(state, active, view)
            dense = False  # counted by the bisection
        elif self.allocation == "max-throughput":
            a = throughput_coefficients(view, state.convention)
            status, _, x, _ = solve_max_sum(a, view.scale, view.count, merge, method, declined)
        else:
            a = coefficients(view, self.allocation, state.convention)  # both conventions' names
            prefer = None
            if ours and self.allocation in AWARE_TIEBREAK:
                # the agnostic policies weigh every type alike; here a type the job cannot run
                # on gets no share (else its whole share may land there and it never runs). The
                # others' a_{j,r} is T_{j,r} times a positive factor: 0 there already
                a = np.where(view.throughput > 0, a, 0.0)
                prefer = coefficients(view, AWARE_TIEBREAK[self.allocation], state.convention)
            status, _, x, _ = solve_max_min(
                a, view.scale, view.count, merge, method, declined, tiebreak=ours, prefer=prefer
            )
        self.dense_solves += dense and not declined
        self.dense_declined += dense and bool(declined)
        bad = check_allocation(view, x)
        if status != Status.OPTIMAL or bad:
            raise HetschedError(
                f"gavel allocation LP failed at t={state.now}: {status.value}, "
                + "; ".join(v.message for v in bad[:3])
            )
        self.lp_solves += 1
        return x

    def solver_stats(self) -> dict:
        """How many allocation LPs the run solved, for the run's summary."""
        return {
            "method": f"allocation LP (dense simplex up to {SMALL_LP} jobs, else HiGHS)",
            "lps_solved": self.lp_solves,
            "dense_simplex": self.dense_solves,
            "dense_simplex_declined": self.dense_declined,
        }

    def _ftf(self, state: GangState, active: list[int], view: AllocationView):
        """Finish-time fairness (Themis), the bisection of :mod:`hetsched.gavel.ftf`: t_j the
        time since arrival; under Gavel's convention D_j holds I_j, accumulated as Gavel does
        (the steps done since the last allocation over that allocation's isolated throughput),
        and every LP test goes to HiGHS's interior point. Under ours the tests are solved as the
        max-min policies' LPs (:func:`_solve`): by the dense simplex up to :data:`SMALL_LP` jobs,
        and the allocation kept is, among the last feasible test's optima, one of most total
        sum a x (one more LP, with the tie-break); the whole bisection is one compiled call
        (:func:`hetsched.gavel.ftf_kernel.ftf_dense`) unless the dense simplex declines."""
        conv = state.convention
        dense = conv != "gavel" and len(active) <= SMALL_LP
        if dense and np.all(np.isfinite(view.steps)):  # the whole policy in one compiled call
            from hetsched.gavel.ftf_kernel import ftf_dense  # numba: when it is used

            arrays = (view.throughput, view.scale, view.count, view.steps)
            arrival = self.data.arrival[active]
            solved, x = ftf_dense(*map(_floats, arrays), arrival, float(state.now), 1e-6, 100)
            if solved:
                self.dense_solves += 1
                return Status.OPTIMAL, x
        t = np.maximum(0.0, state.now - self.data.arrival[active])
        isolated, choose = None, None
        if conv == "gavel":
            for j in active:
                if j in self.last_steps:
                    before, iso = self.last_steps[j]
                    self.isolated_time[j] += (before - state.remaining(j)) / iso
            isolated = self.isolated_time[active]
            iso = isolated_throughput(view, "gavel")
            self.last_steps = {j: (state.remaining(j), iso[i]) for i, j in enumerate(active)}
        d = denominators(view, t, conv, isolated)
        if conv == "gavel":
            test = fast_test(view, t, conv, method=lp_method(conv)[0], d=d)
        else:  # as the max-min policies: dense up to SMALL_LP jobs, a tie-break among optima
            method, merge = ("dense", False) if dense else lp_method(conv)
            notes: list[str] = []
            test = fast_test(view, t, conv, method=method, merge=merge, notes=notes, d=d)
            choose = fast_test(view, t, conv, method=method, merge=merge, tiebreak=True, d=d)
        found = bisect_rho(view, t, test, conv, isolated, tol=1e-6, choose=choose, d=d)
        if dense:
            self.dense_solves += not notes
            self.dense_declined += bool(notes)
        status = Status.OPTIMAL if found.x is not None else Status.ERROR
        return status, found.x if found.x is not None else np.zeros_like(view.throughput)

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        if state.convention == "gavel":
            return self._allocate_as_gavel(state)
        d = self.data
        active = state.active()
        if tuple(active) != self.active_set:
            self._enter(state, active)
        rec = self._rec
        p = priorities(self.x, self._usable, rec, self._elapsed)
        placed, gpus = place_indexed(
            p, self._gang, self._type_gpus, self._prev_type, self._prev_gpus, d.n_gpus
        )
        # while the set stays, every job placed runs the round on and holds those GPUs next
        self._prev_type, self._prev_gpus = placed, gpus
        self._elapsed += 1
        ran = np.flatnonzero(placed >= 0)
        rec[ran, placed[ran]] += 1  # one (job, type) pair per job placed
        rows = gpus.tolist()
        return {active[i]: tuple([g for g in rows[i] if g >= 0]) for i in ran.tolist()}

    def _enter(self, state: GangState, active: list[int]) -> None:
        """A new active set: keep the rounds each leaving job received, solve the LP, and read
        the newcomers' counts (a job's priority counts its rounds since it arrived)."""
        if self.active_set:
            ids = np.array(self.active_set)
            self.received[ids] = self._rec
            self.elapsed[ids] = self._elapsed
        rows = np.array(active, dtype=np.int64)  # the set's rows, converted once
        self.x = self._solve(state, active, rows)
        self.active_set = tuple(active)
        self._rec = self.received[rows]  # the set's rows of received and elapsed, written
        self._elapsed = self.elapsed[rows]  # back when the set changes
        self._usable = (self.x > 1e-9) & (self.thr[rows] > 0)
        self._gang = self.data.gang[rows].astype(np.int64)
        held, kind = state.held, self.data.type_of
        self._prev_type, self._prev_gpus = previous_arrays(
            len(active), {i: (kind[held[j][0]], held[j]) for i, j in enumerate(active) if j in held}
        )

    def _allocate_as_gavel(self, state: GangState) -> dict[int, tuple[int, ...]]:
        """One round of Gavel's own simulator (module doc of ``gavel_mechanism``)."""
        d = self.data
        m = self.mechanism
        if m is None:
            m = self.mechanism = GavelMechanism(len(d.types), state.round_seconds)
        active = state.active()
        live = set(active)
        for j, gpus in self.last_plan.items():  # the round that just ended (_done_callback)
            ran = float(state.executed[j]) - self.last_executed[j]
            m.account(j, int(d.gpu_type[gpus[0]]), ran)
        for j in [j for j in m.job_time if j not in live]:
            m.remove(j)
        for j in active:
            if j not in m.job_time:
                m.admit(j)
        if not self.last_plan and not state.arrivals_pending and state.round > 0:
            m.last_reset = 0.0  # Gavel forces a reset when nothing ran and no job is queued
        if m.due(state.now):
            x = self._solve(state, active, np.array(active, dtype=np.int64))
            m.reset(state.now, {j: x[i] for i, j in enumerate(active)})
        aware = self.allocation != "max-min-fairness"
        order = type_order(d.types, None if aware else self.shuffler.getrandbits(32))
        thr = d.throughput[active]
        chosen = m.choose(active, thr, d.gang[active], d.type_count(), order)
        plan = _place(chosen, state, d)
        self.last_plan = plan
        self.last_executed = {j: float(state.executed[j]) for j in plan}
        return plan


def _place(chosen: dict[int, int], state: GangState, d) -> dict[int, tuple[int, ...]]:
    """GPUs for the chosen (job, type) pairs, gang sizes from the largest: in each size, jobs
    keep their GPUs when these are of the chosen type and free, then the others take the
    lowest-numbered free GPUs of their type."""
    free = {r: list(d.gpus_of_type[r]) for r in set(chosen.values())}
    plan: dict[int, tuple[int, ...]] = {}
    for size in sorted({int(d.gang[j]) for j in chosen}, reverse=True):
        jobs = [j for j in chosen if int(d.gang[j]) == size]
        for j in jobs:
            prev, r = state.held.get(j), chosen[j]
            if prev and all(g in free[r] for g in prev):
                plan[j] = prev
                free[r] = [g for g in free[r] if g not in prev]
        for j in jobs:
            if j not in plan:
                r = chosen[j]
                plan[j], free[r] = tuple(free[r][:size]), free[r][size:]
    return plan
