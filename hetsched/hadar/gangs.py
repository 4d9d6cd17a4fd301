"""Gangs of one slot: for each throughput level of a job, the cheapest W_j GPUs at given prices
(the building block of Hadar's pricing (4) and of a job's fastest run on the empty cluster)."""

from __future__ import annotations

from itertools import islice

import numpy as np

from hetsched.hadar.view import HadarView

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
