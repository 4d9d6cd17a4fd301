"""Scaling real data to integers for integer solvers, and saying what that costs."""

from __future__ import annotations

import math
from typing import Iterable


def exact_decimal_scale(values: Iterable[float], max_digits: int = 6) -> int | None:
    """The least 10^d (d <= max_digits) that makes every value an integer, or None."""
    vals = list(values)
    for d in range(max_digits + 1):
        s = 10**d
        if all(abs(x * s - round(x * s)) <= 1e-9 * max(1.0, abs(x * s)) for x in vals):
            return s
    return None


def ceil_ticks(x: float, scale: int) -> int:
    """ceil(x * scale), forgiving float noise just above an integer (e.g. 0.1 * 30)."""
    y = x * scale
    r = round(y)
    return int(r) if abs(y - r) <= 1e-9 * max(1.0, abs(y)) else int(math.ceil(y))


def instance_times(instance) -> list[float]:
    """Every arrival, training and synchronization time of an instance."""
    out: list[float] = []
    for j in instance.jobs:
        out += [j.arrival, *j.train_time.values(), *j.sync_time.values(),
                *j.train_time_per_gpu.values(), *j.sync_time_per_gpu.values()]
    return out


def instance_in_ticks(instance, scale: int):
    """The instance with every time replaced by ceil(time * scale)."""
    from dataclasses import replace

    def up(d):
        return {k: float(ceil_ticks(t, scale)) for k, t in d.items()}

    jobs = tuple(replace(j, arrival=float(ceil_ticks(j.arrival, scale)), train_time=up(j.train_time),
                         sync_time=up(j.sync_time), train_time_per_gpu=up(j.train_time_per_gpu),
                         sync_time_per_gpu=up(j.sync_time_per_gpu)) for j in instance.jobs)
    return replace(instance, jobs=jobs)
