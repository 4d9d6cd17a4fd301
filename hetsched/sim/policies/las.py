"""Least-attained-service policies with K priority queues (the TCC paper, Sec. 4; Tiresias).

* ``hlas`` (Algorithms 1-3): job size H_n(t) = R_n^r(t) T-bar_n, R^r the rounds already run and
  T-bar_n the job's round time at the cluster's average speed (what GPU grouping equalizes:
  K_n tasks at the mean speed 1/(T^c + T^s) over GPUs, spread over |M| GPUs). A new job enters
  Q_1; a job sits in the queue whose thresholds hold its size. For each idle GPU, the highest
  non-empty queue serves a *partially scheduled* job first, else its first job in FIFO order.
* ``hlas-p`` (Sec. 5.B): expected size (R^r + R^p) T-bar_n with R^p = the predicted extra
  rounds; in each queue, sub-queue q^1 (R^p > 0, larger R^p first) before q^2 (FIFO). The
  prediction is a *hint*: at least ``min_rounds[job]`` rounds (the instance's
  ``metadata.hlas_p.min_rounds``, as in Fig. 12c), alpha = max(0, hint - R^r), standing in for
  the paper's loss-curve fit (no shipped trace has loss curves). The history step of Sec. V.A is
  built: once jobs with the same model name have completed, R^p = the average of alpha and their
  mean rounds still to run (``history=False`` turns it off). The NAS-group step is not (no trace
  marks NAS groups).
* ``las2d`` (Tiresias' 2D-LAS as the TCC paper describes it): attained service = task-GPU time
  (sum of T^c of the tasks run), the same queues, FIFO inside a queue, and a round starts only
  when as many GPUs as it has tasks are idle (no relaxed synchronization; at most all GPUs), on
  idle GPUs in index order (heterogeneity-oblivious). A job that does not fit is skipped for this
  instant.

GPU groups (``hlas:U``, ``hlas-p:U``): the preparation stage of HLAS, eqs. (4)-(6). The policy
then runs on a machine whose GPUs are U groups of similar speed (:mod:`hetsched.sim.gpu_groups`;
``machine`` below); without U every GPU is its own group, as in the TCC paper's toy examples.

Thresholds E_1 < E_2 < ... (a job of size H is in queue 1 + #{k : E_k <= H}): the policy's
option, else the instance's ``metadata.hlas.thresholds``, else 2, 8 and 32 times the median
T-bar_n (HLAS) or the median one-round task-GPU time (2D-LAS).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_right

import numpy as np

from hetsched.sim.engine import SimState
from hetsched.sim.policies.common import LazyHeap, gang_size, mean_task_time


class _Queues(ABC):
    name = ""
    clairvoyant = False

    def __init__(self, thresholds: list[float] | None = None):
        self.thresholds = None if thresholds is None else sorted(float(x) for x in thresholds)

    @abstractmethod
    def unit(self, state: SimState, n: int) -> float:
        """The job's size scale: thresholds default to multiples of its median."""

    def prepare(self, instance, view) -> None:
        self._units = None
        self._heap = LazyHeap()
        hlas = instance.extensions.hlas
        if self.thresholds is None and hlas is not None and hlas.thresholds:
            self.thresholds = list(hlas.thresholds)

    def _setup(self, state: SimState) -> None:
        if self._units is None:
            units = [float(self.unit(state, n)) for n in range(state.view.n_jobs)]
            if self.thresholds is None:
                base = float(np.median(units))
                self.thresholds = [2 * base, 8 * base, 32 * base]
            self._units = units  # Python floats: the same IEEE arithmetic as numpy's, faster

    def queue_of(self, size: float) -> int:
        return bisect_right(self.thresholds, size * (1 + 1e-12))


class Hlas(_Queues):
    name = "hlas"

    def __init__(self, thresholds: list[float] | None = None, groups: int | None = None):
        super().__init__(thresholds)
        self.groups = groups
        self.grouping = None

    def machine(self, instance):
        """The cluster this policy schedules on: U GPU groups (eqs. (4)-(6)), or the GPUs as they are."""
        if self.groups is None:
            return instance
        from hetsched.sim.gpu_groups import grouped_cluster

        self.grouping = grouped_cluster(instance, self.groups)
        self.name = f"{type(self).name}:{self.groups}"
        return self.grouping.machine

    def unit(self, state: SimState, n: int) -> float:
        v = state.view
        return mean_task_time(state, n) * int(v.tasks_per_round[n]) / v.n_gpus  # T-bar_n

    def size(self, state: SimState, n: int) -> float:
        return float(state.rounds_done[n]) * self._units[n]  # H_n(t)

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._setup(state)
        self._heap.refresh(
            state, lambda n: self._key(state, n, int(state.rank[n]), state.started[n] > 0)
        )
        ready: dict[int, int] = {}
        out = []
        for m in state.idle_gpus:  # Algorithm 1, lines 6-10: each idle GPU in turn
            top = self._heap.pop(state)
            while (
                top is not None and ready.get(top[1], 1) == 0
            ):  # an old entry of a job placed in full now
                top = self._heap.pop(state)
            if top is None:
                break
            n = top[1]
            ready.setdefault(n, int(state.ready[n]))
            out.append((n, m))
            ready[n] -= 1
            if (
                ready[n] > 0
            ):  # now partially scheduled (its size and queue do not change within the instant)
                self._heap.push(state, self._key(state, n, int(state.rank[n]), True), n)
        return out

    def _key(self, state: SimState, n: int, position: int, partial: bool) -> tuple:
        """Queue, then partially scheduled first, then FIFO (Algorithm 3)."""
        return (self.queue_of(self.size(state, n)), not partial, position)


class HlasP(Hlas):
    name = "hlas-p"

    def __init__(
        self,
        thresholds: list[float] | None = None,
        min_rounds: dict[str, int] | None = None,
        groups: int | None = None,
        history: bool = True,
    ):
        super().__init__(thresholds, groups)
        self.min_rounds = min_rounds
        self.history = history

    def prepare(self, instance, view) -> None:
        super().prepare(instance, view)
        hints = self.min_rounds
        if hints is None:
            hlas = instance.extensions.hlas
            hints = dict(hlas.min_rounds) if hlas is not None else {}
        self._hint = [int(hints.get(j, 0)) for j in view.job_ids]
        names = [job.model.name if job.model is not None else None for job in instance.jobs]
        self._family = [name if self.history else None for name in names]
        # the history, per model name: rounds of its completed jobs (sum and count), and its
        # arrived, unfinished jobs (whose predictions move when a job of the name completes)
        self._rounds_sum: dict[str, int] = {}
        self._completed: dict[str, int] = {}
        self._members: dict[str, set[int]] = {}
        self._recorded = np.zeros(view.n_jobs, dtype=bool)

    def _learn(self, state: SimState) -> set[str]:
        """Record the rounds of jobs that completed since the last decision (the history); the
        model names whose history changed."""
        learned: set[str] = set()
        for n in state.changed:
            family = self._family[n]
            if family is None:
                continue
            if not state.done[n]:
                self._members.setdefault(family, set()).add(n)
            elif not self._recorded[n]:
                self._recorded[n] = True
                self._members.get(family, set()).discard(n)
                self._rounds_sum[family] = self._rounds_sum.get(family, 0) + state.total_rounds(n)
                self._completed[family] = self._completed.get(family, 0) + 1
                learned.add(family)
        return learned

    def learned(self) -> dict[str, tuple[int, float]]:
        """Model name -> (completed jobs recorded, their mean number of rounds)."""
        return {f: (c, self._rounds_sum[f] / c) for f, c in self._completed.items()}

    def predicted(self, state: SimState, n: int) -> float:
        """R^p_n(t): alpha = the hint's rounds still to run; with similar completed jobs (same model
        name) in history, the average of alpha and their mean rounds still to run (Sec. V.A)."""
        done = int(state.rounds_done[n])
        alpha = max(0, int(self._hint[n]) - done)
        family = self._family[n]
        count = self._completed.get(family, 0) if family is not None else 0
        if not count:
            return float(alpha)
        return max(0.0, (alpha + self._rounds_sum[family] / count - done) / 2)

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._setup(state)
        for family in self._learn(state):  # these predictions changed: re-key the waiting jobs
            for n in self._members.get(family, ()):
                if state.ready[n] > 0:
                    key = self._key(state, n, int(state.rank[n]), state.started[n] > 0)
                    self._heap.rekey(state, key, n)
        return super().assign(state)

    def size(self, state: SimState, n: int, rp: float | None = None) -> float:
        """Expected size (R^r + R^p) T-bar_n; ``rp``: R^p if already computed."""
        if rp is None:
            rp = self.predicted(state, n)
        return (float(state.rounds_done[n]) + rp) * self._units[n]

    def _key(self, state: SimState, n: int, position: int, partial: bool) -> tuple:
        rp = self.predicted(state, n)
        sub = (0, -rp) if rp > 0 else (1, 0)  # q^1 by R^p descending, then q^2
        return (self.queue_of(self.size(state, n, rp)), not partial, sub, position)


class Las2d(_Queues):
    name = "las2d"

    def unit(self, state: SimState, n: int) -> float:
        v = state.view
        return float(np.mean(v.train[n])) * int(v.tasks_per_round[n])  # one round's task-GPU time

    def prepare(self, instance, view) -> None:
        super().prepare(instance, view)
        self._by_gang: dict[
            int, LazyHeap
        ] = {}  # one heap per gang size: the first job that fits is a peek away

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._setup(state)
        for n in state.changed:
            if state.ready[n] > 0:
                heap = self._by_gang.setdefault(gang_size(state, n), LazyHeap())
                heap.push(state, (self.queue_of(state.service[n]), int(state.rank[n])), n)
        free = state.idle_gpus
        out: list[tuple[int, int]] = []
        placed: set[int] = set()
        while free:  # the highest-priority job whose gang fits in the idle GPUs
            tops = [
                (top, heap)
                for size, heap in self._by_gang.items()
                if size <= len(free)
                for top in [heap.peek(state)]
                if top is not None
            ]
            if not tops:
                break
            (k, n), heap = min(tops, key=lambda th: th[0])
            heap.pop(state)
            if n in placed:
                continue
            placed.add(n)
            out += [(n, free.pop(0)) for _ in range(min(int(state.ready[n]), len(free)))]
        return out
