"""Waiting jobs by priority for the task policies: heaps whose stale entries are skipped when
popped (a job's key moves only when its state does, :attr:`SimState.changed`).

Keys are tuples of one length per heap. An entry is the key with the job and its freshness
appended, ``key + (n, ...)``, not ``(key, n, ...)``: the order is the same, and a flat tuple
compares about twice as fast as a nested one (measured with ``heapq``), which is most of what
a heap costs."""

from __future__ import annotations

import heapq

from hetsched.sim.engine import SimState


class LazyHeap:
    """Waiting jobs by a priority key, updated from :attr:`SimState.changed` only (a job's key may
    change only when its state does): entries carry the job's version and go stale when it moves.
    A policy whose keys also move for other reasons (HLAS-P's history) re-keys a job with
    :meth:`rekey`, which makes the job's older entries stale too."""

    def __init__(self):
        self.heap: list[tuple] = []
        self.stamp: dict[int, int] = {}  # job -> times re-keyed by the policy
        # jobs changed since the heap was last brought up to date (:meth:`note`, :meth:`catch_up`)
        self.pending: set[int] = set()

    def refresh(self, state: SimState, key) -> None:
        for n in state.changed:
            if state.ready[n] > 0:
                self.push(state, key(n), n)

    def note(self, changed: set[int]) -> None:
        """Jobs whose state changed, for a heap read only at some decisions: :meth:`catch_up`
        pushes them when it is read (a job that changes twice in between is pushed once)."""
        self.pending |= changed

    def catch_up(self, state: SimState, key) -> None:
        """Push every job noted since the last call that still waits, at its current key."""
        for n in self.pending:
            if state.ready[n] > 0:
                self.push(state, key(n), n)
        self.pending.clear()

    def _current(self, state: SimState, n: int, v: int, s: int) -> bool:
        return v == state.version[n] and s == self.stamp.get(n, 0) and state.ready[n] > 0

    def pop(self, state: SimState):
        """The best current (key, job), or None (:meth:`_current`, inline: the hot path)."""
        heap, version, stamp, ready, pop = (
            self.heap,
            state.version,
            self.stamp,
            state.ready,
            heapq.heappop,
        )
        while heap:
            e = pop(heap)
            n = e[-3]
            if e[-2] == version[n] and e[-1] == stamp.get(n, 0) and ready[n] > 0:
                return e[:-3], n
        return None

    def peek(self, state: SimState):
        """The best current (key, job) without removing it, or None."""
        heap, version, stamp, ready = self.heap, state.version, self.stamp, state.ready
        while heap:
            e = heap[0]
            n = e[-3]
            if e[-2] == version[n] and e[-1] == stamp.get(n, 0) and ready[n] > 0:  # _current
                return e[:-3], n
            heapq.heappop(heap)
        return None

    def push(self, state: SimState, k, n: int) -> None:
        heap = self.heap
        heapq.heappush(heap, k + (n, state.version[n], self.stamp.get(n, 0)))
        if len(heap) & 1023 == 0 and len(heap) > 4 * state.n_waiting + 4096:
            self._compact(state)  # looked at every 1,024 entries

    def _compact(self, state: SimState) -> None:
        """Drop the stale entries at once (a policy that re-keys often leaves many): the current
        entries, and so every later pop, are the same; the cost is paid for by the pushes that
        made the heap this large."""
        self.heap = [e for e in self.heap if self._current(state, *e[-3:])]
        heapq.heapify(self.heap)

    def invalidate(self, n: int) -> None:
        """Job n's entries go stale (it waits elsewhere now)."""
        self.stamp[n] = self.stamp.get(n, 0) + 1

    def rekey(self, state: SimState, k, n: int) -> None:
        """Job n's key is now ``k``: its older entries go stale."""
        self.invalidate(n)
        self.push(state, k, n)


class KeyedHeap:
    """One entry per waiting job, as :class:`LazyHeap` keeps, for a policy whose only heap holds
    every waiting job and re-keys every job that changed (HLAS, HLAS-P). A job that changes but
    keeps its key keeps its entry: most changes (a task of a partly placed round starts, a
    round ends inside a queue) leave the key where it was, and the push and the later stale pop
    are saved. The current entries, and so every pop, are the same as :class:`LazyHeap`'s.

    An entry is current while its token is the job's latest (a push moves it on) and the job has
    a ready task; ``_key`` holds the key of each job's current entry while it is in the heap.
    HLAS reads the top with :meth:`peek` and removes it with :meth:`drop_top` only when it
    moves."""

    def __init__(self):
        self.heap: list[tuple] = []
        self._token: dict[int, int] = {}
        self._key: dict = {}

    def refresh(self, state: SimState, key) -> None:
        ready, held = state.ready, self._key
        for n in state.changed:
            if ready[n] > 0:
                k = key(n)
                if held.get(n) != k:
                    self.push(state, k, n)

    def peek(self, state: SimState):
        """The best current (key, job), left in the heap (stale entries above it are dropped), or
        None."""
        heap, token, ready, held = self.heap, self._token, state.ready, self._key
        while heap:
            e = heap[0]
            n = e[-2]
            if e[-1] == token[n]:
                if ready[n] > 0:
                    return held[n], n
                del held[n]
            heapq.heappop(heap)
        return None

    def drop_top(self) -> None:
        """Remove the entry :meth:`peek` returned."""
        del self._key[heapq.heappop(self.heap)[-2]]

    def push(self, state: SimState, k, n: int) -> None:
        t = self._token[n] = self._token.get(n, 0) + 1
        self._key[n] = k
        heap = self.heap
        heapq.heappush(heap, k + (n, t))
        if len(heap) & 1023 == 0 and len(heap) > 4 * state.n_waiting + 4096:
            self._compact()  # looked at every 1,024 entries

    def _compact(self) -> None:
        """Drop the stale entries at once (as :meth:`LazyHeap._compact`)."""
        token = self._token
        self.heap = [e for e in self.heap if e[-1] == token[e[-2]]]
        heapq.heapify(self.heap)

    def rekey(self, state: SimState, k, n: int) -> None:
        """Job n's key is now ``k``."""
        self.push(state, k, n)
