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
