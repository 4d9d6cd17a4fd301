"""HLAS-P (the TCC paper, Sec. 5.B): HLAS with the expected size (R^r + R^p) T-bar_n, where R^p
is the predicted extra rounds; in each queue, sub-queue q^1 (R^p > 0, larger R^p first) before
q^2 (FIFO). The prediction is a *hint*: at least ``min_rounds[job]`` rounds (the instance's
``metadata.hlas_p.min_rounds``, as in Fig. 12c), alpha = max(0, hint - R^r), standing in for the
paper's loss-curve fit (no shipped trace has loss curves). The history step of Sec. V.A is built:
once jobs with the same model name have completed, R^p = the average of alpha and their mean
rounds still to run (``history=False`` turns it off). The NAS-group step is not (no trace marks
NAS groups).

**Re-keying only what moved.** A completion moves the history's mean m of its model name, and with
it the keys of waiting jobs of that name. A job with R^r >= its hint has R^p = max(0, (m - R^r) /
2): if R^r is at least both the old and the new mean, R^p is 0 before and after, and its key does
not move; and a completion that leaves the mean where it was (jobs of one model often run the same
number of rounds) moves no key at all. So each name keeps its unfinished jobs in buckets by R^r (a
job short of its hint in bucket -1, always re-keyed), and a completion that moves the mean re-keys
only those below the larger of the two means. Every entry of the heap, and so every decision, is
the same as re-keying every waiting job of the name (tests compare the schedules); on an overloaded
trace a completion costs the jobs whose prediction may move, not the backlog of the name.

The buckets are kept lazily: a job is filed when it arrives, and moved (or dropped, once complete)
only when a re-keying reads its bucket. R^r only grows, so a job is never in a bucket above its
own, and a re-keying that reads buckets -1, 0, 1, ... in turn meets every job of the ones below
its bound in its true bucket. A round's end costs nothing here; means move far less often.
"""

from __future__ import annotations

import math
from bisect import bisect_right

from hetsched.sim.engine import SimState
from hetsched.sim.policies.las import Hlas


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
        # the history, per model name: rounds of its completed jobs (sum and count) and their mean;
        # and its unfinished jobs by R^r (-1 while short of the hint) (module doc)
        self._rounds_sum: dict[str, int] = {}
        self._completed: dict[str, int] = {}
        self._mean_of: dict[str | None, float] = {}  # names with history only
        self._members: dict[str, dict[int, set[int]]] = {}
        # 0: not seen yet; 1: filed in its name's buckets; 2: in the history (or no name)
        self._status = [0] * view.n_jobs

    def _mean(self, family: str) -> float:
        """The mean rounds of the name's completed jobs; 0 before the first (R^p = alpha then,
        which is 0 at or past the hint)."""
        return self._mean_of.get(family, 0.0)

    def _bucket(self, state: SimState, n: int) -> int:
        """Job n's bucket: R^r, or -1 while short of its hint."""
        done = state.rounds_done[n]
        return done if done >= self._hint[n] else -1

    def _learn(self, state: SimState) -> dict[str, float]:
        """File newly arrived jobs in their name's buckets and record the rounds of jobs that
        completed since the last decision (the history); the model names whose history changed,
        each with its mean before the change."""
        learned: dict[str, float] = {}  # stays empty at most decisions (no job completed)
        status, finished = self._status, state.done
        for n in state.changed:
            seen = status[n]
            if seen == 2 or (seen == 1 and not finished[n]):  # most changes: a task placed
                continue
            family = self._family[n]
            if family is None:
                status[n] = 2
                continue
            if seen == 0:
                by_rounds = self._members.setdefault(family, {})
                by_rounds.setdefault(self._bucket(state, n), set()).add(n)
                status[n] = 1
            if finished[n]:  # its last round ended now: it joins the history (the bucket lets
                status[n] = 2  # it go when next read)
                learned.setdefault(family, self._mean(family))
                done = state.rounds_done[n]
                total = self._rounds_sum[family] = self._rounds_sum.get(family, 0) + done
                count = self._completed[family] = self._completed.get(family, 0) + 1
                self._mean_of[family] = total / count
        return learned

    def learned(self) -> dict[str, tuple[int, float]]:
        """Model name -> (completed jobs recorded, their mean number of rounds)."""
        return {f: (c, self._mean_of[f]) for f, c in self._completed.items()}

    def predicted(self, state: SimState, n: int) -> float:
        """R^p_n(t): alpha = the hint's rounds still to run; with similar completed jobs (same model
        name) in history, the average of alpha and their mean rounds still to run (Sec. V.A)."""
        done = state.rounds_done[n]
        alpha = max(0, self._hint[n] - done)
        mean = self._mean_of.get(self._family[n])
        if mean is None:
            return float(alpha)
        return max(0.0, (alpha + mean - done) / 2)

    def _learn_and_rekey(self, state: SimState) -> None:
        """The history's step before each decision (module doc)."""
        learned = self._learn(state)
        if not learned:
            return
        for family, before in learned.items():  # these predictions may have moved
            after = self._mean(family)
            if after == before:  # the same mean (0 only before the first completion): same keys
                continue
            # jobs at or past both means (and their hint) predict 0 before and after: skipped
            below = math.ceil(max(before, after))
            by_rounds = self._members[family]
            for rounds in range(-1, below):  # upwards: a job moved up is met again (module doc)
                bucket = by_rounds.get(rounds)
                for n in list(bucket or ()):
                    if state.done[n]:
                        bucket.discard(n)
                        continue
                    now = self._bucket(state, n)
                    if now != rounds:
                        bucket.discard(n)
                        by_rounds.setdefault(now, set()).add(n)
                    elif state.ready[n] > 0:
                        key = self._key(state, n, state.rank[n], state.started[n] > 0)
                        self._heap.rekey(state, key, n)

    def size(self, state: SimState, n: int, rp: float | None = None) -> float:
        """Expected size (R^r + R^p) T-bar_n; ``rp``: R^p if already computed."""
        if rp is None:
            rp = self.predicted(state, n)
        return (state.rounds_done[n] + rp) * self._units[n]

    def _key(self, state: SimState, n: int, position: int, partial: bool) -> tuple:
        """Queue, partially scheduled first, then q^1 by R^p descending before q^2, then FIFO:
        (4 queue + 2 [not partial] + [in q^2], -R^p or 0, position), which orders as the nested
        (queue, not partial, (q, -R^p), position) and compares faster in the heap. R^p and the
        size as :meth:`predicted` and :meth:`size` (inline: a key per change of a job)."""
        done = state.rounds_done[n]
        alpha = self._hint[n] - done
        if alpha < 0:
            alpha = 0
        mean = self._mean_of.get(self._family[n])
        if mean is None:
            rp = float(alpha)
        else:
            rp = (alpha + mean - done) / 2
            if rp < 0:
                rp = 0.0
        queue = bisect_right(self.thresholds, (done + rp) * self._units[n] * (1 + 1e-12))
        head = 4 * queue + 2 * (not partial)
        if rp > 0:
            return (head, -rp, position)
        return (head + 1, 0, position)
