"""Scaling real data to integers for integer solvers, and saying what that costs."""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np


def exact_decimal_scale(values: Iterable[float], max_digits: int = 6) -> int | None:
    """The least 10^d (d <= max_digits) that makes every value an integer, or None (an array is
    read a block at a time: a million values need no million-long temporaries)."""
    vals = values if isinstance(values, np.ndarray) else np.fromiter(values, dtype=float)
    blocks = [vals[i : i + (1 << 16)] for i in range(0, len(vals), 1 << 16)]
    for d in range(max_digits + 1):
        if all(_whole(block * 10**d) for block in blocks):
            return 10**d
    return None


def _whole(y: np.ndarray) -> bool:
    """Every value an integer up to float noise; a positive value is never the integer 0."""
    r = np.round(y)
    return bool(
        np.all((np.abs(y - r) <= 1e-9 * np.maximum(1.0, np.abs(y))) & ((r != 0) | (y == 0)))
    )


def on_grid(
    total: float, times: Iterable[float], weights: Iterable[float], max_digits: int = 6
) -> float:
    """``total`` (a weighted sum of sums of ``times``) rounded to the decimals its inputs carry:
    times with d_t decimals and weights with d_w make a multiple of 10^-(d_t + d_w), so the
    rounding removes only float noise (36.599999999999994 -> 36.6). Unchanged when the inputs
    have more than ``max_digits`` decimals."""
    ts, ws = exact_decimal_scale(times, max_digits), exact_decimal_scale(weights, max_digits)
    if ts is None or ws is None:
        return total
    return round(total, len(str(ts)) + len(str(ws)) - 2)


def ceil_ticks(x: float, scale: int) -> int:
    """ceil(x * scale), forgiving float noise just above an integer (e.g. 0.1 * 30), but never
    0 for a positive x (a task of 1e-12 s still takes a tick: 0 ticks is no task at all)."""
    y = x * scale
    r = round(y)
    if abs(y - r) <= 1e-9 * max(1.0, abs(y)) and (r != 0 or y <= 0):
        return int(r)
    return int(math.ceil(y))


def instance_times(instance) -> list[float]:
    """Every arrival, training and synchronization time of an instance."""
    out: list[float] = []
    for j in instance.jobs:
        out += [
            j.arrival,
            *j.train_time.values(),
            *j.sync_time.values(),
            *j.train_time_per_gpu.values(),
            *j.sync_time_per_gpu.values(),
        ]
    return out


def instance_in_ticks(instance, scale: int):
    """The instance with every time replaced by ceil(time * scale)."""
    from dataclasses import replace

    def up(d):
        return {k: float(ceil_ticks(t, scale)) for k, t in d.items()}

    jobs = tuple(
        replace(
            j,
            arrival=float(ceil_ticks(j.arrival, scale)),
            train_time=up(j.train_time),
            sync_time=up(j.sync_time),
            train_time_per_gpu=up(j.train_time_per_gpu),
            sync_time_per_gpu=up(j.sync_time_per_gpu),
        )
        for j in instance.jobs
    )
    return replace(instance, jobs=jobs)
