"""Hadar's view as arrays (Sec. III.A, Table I): the :class:`HadarView` every Hadar method
works on, one slot's cheapest gangs (:func:`cheapest_gangs`) and a job's fastest rate on the
empty cluster (:func:`fastest_rate`). :func:`hetsched.hadar.view.hadar_view` reads it from an
instance; the searches, utilities and prices stand on this module alone."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import islice

import numpy as np


@dataclass(frozen=True)
class HadarView:
    job_ids: tuple[str, ...]
    machines: tuple[str, ...]
    types: tuple[str, ...]
    capacity: np.ndarray  # c[h, r]
    arrival: np.ndarray  # a_j (slot, 1-based)
    workers: np.ndarray  # W_j
    work: np.ndarray  # E_j N_j iterations
    throughput: np.ndarray  # X[j, r] iterations/s per GPU
    slot_seconds: float  # L
    horizon: int  # T
    progress: str  # "per-worker" | "bottleneck"
    utility: str = "effective-throughput"  # U_j, one of UTILITY_NAMES
    jct_offset: int = 1  # JCT = (f - a + jct_offset) L: 1 ("f-a+1", default) or 0 ("f-a")

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    @functools.cached_property
    def machine_class(self) -> np.ndarray:
        """Each machine's capacity class (machines with equal rows of c share one), worked out
        once per view rather than once per slot."""
        return np.unique(self.capacity, axis=0, return_inverse=True)[1].astype(np.int64).ravel()

    def jct(self, j: int, finish: int) -> float:
        """The JCT in seconds of job j finishing in slot ``finish``: (f_j - a_j + 1) L, or
        (f_j - a_j) L under the literal reading (module doc)."""
        return float(finish - self.arrival[j] + self.jct_offset) * self.slot_seconds

    def rate(self, j: int, used_types: list[int], n_workers: int) -> float:
        """Iterations per slot for job j on GPUs of ``used_types`` (x_j(t) of (1b), times L)."""
        x = min(self.throughput[j, r] for r in used_types)
        return x * self.slot_seconds * (n_workers if self.progress == "per-worker" else 1)


Gang = tuple[tuple[int, int, int], ...]  # ((h, r, count), ...)


def cheapest_gangs(
    view: HadarView,
    j: int,
    k_t: np.ndarray,
    free: np.ndarray | None = None,
    exact_levels: bool = False,
) -> list[tuple[Gang, float, float]]:
    """For one slot with prices ``k_t[h, r]``: per throughput level of job j, the cheapest gang of
    W_j GPUs over the types at least that fast, as (gang, rate per slot, cost); dominated ones dropped.

    ``exact_levels``: per level, the cheapest gang whose slowest type is exactly that level (so
    its rate is exactly that level's), none dropped -- what a slot needs where running faster
    can hurt (a finish not allowed before some slot)."""
    need = int(view.workers[j])
    cap = view.capacity if free is None else free
    x = view.throughput[j]
    out: list[tuple[Gang, float, float]] = []
    for level in sorted({float(v) for v in x if v > 0}, reverse=True):
        cells = sorted(
            (
                (float(k_t[h, r]), h, r)
                for h in range(cap.shape[0])
                for r in range(cap.shape[1])
                if x[r] >= level and cap[h, r] > 0
            )
        )
        units = list(
            islice(((price, h, r) for price, h, r in cells for _ in range(int(cap[h, r]))), need)
        )
        if len(units) < need:
            continue
        if exact_levels and not any(x[r] == level for _, _, r in units):
            at_level = [(price, h, r) for price, h, r in cells if x[r] == level]
            if not at_level:
                continue
            units = units[:-1] + [
                at_level[0]
            ]  # the W-1 cheapest and the cheapest unit at the level
        counts: dict[tuple[int, int], int] = {}
        for _, h, r in units:
            counts[h, r] = counts.get((h, r), 0) + 1
        gang = tuple((h, r, n) for (h, r), n in counts.items())
        cost = float(sum(price for price, _, _ in units))
        rate = view.rate(j, sorted({r for _, r, _ in gang}), need)
        if exact_levels or not any(c <= cost and rt >= rate for _, rt, c in out):
            out.append((gang, rate, cost))
    return out


def fastest_rate(view: HadarView, j: int) -> float:
    """Iterations per slot of job j's fastest gang on the whole (empty) cluster."""
    return max(rate for _, rate, _ in cheapest_gangs(view, j, np.zeros(view.capacity.shape)))
