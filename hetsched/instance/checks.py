"""The value checks of the data model, with the wording of the file loader: each failure is one
:class:`~hetsched.errors.InputError` naming the object (or file), the JSON path and the reason,
e.g. ``job 'J3': $.train_time.v100: must be > 0 (got -2)``."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Mapping

from hetsched.errors import InputError
from hetsched.jsonfile import json_child


def check_id(source: str, path: str, value: Any) -> None:
    """An id: a non-empty string."""
    if not isinstance(value, str) or not value:
        raise InputError(source, path, f"must be a non-empty string (got {value!r})")


def check_number(
    source: str, path: str, value: Any, low: float, high: float, strict: bool = False
) -> None:
    """A finite number in ``[low, high]`` (``(low, high]`` if ``strict``)."""
    kind = type(value)
    if (
        (kind is float or kind is int)
        and (low < value if strict else low <= value)
        and value <= high
    ):
        return  # the common case in one test (NaN and inf fail it)
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(source, path, f"must be a number (got {value!r})")
    if not math.isfinite(value):
        raise InputError(source, path, f"must be a finite number (got {float(value)})")
    if value < low or (strict and value == low):
        raise InputError(source, path, f"must be {'>' if strict else '>='} {low:g} (got {value:g})")
    if value > high:
        raise InputError(
            source, path, f"must be <= {high:g} (got {value:g}): larger values are refused"
        )


def check_whole(source: str, path: str, value: Any, low: int, high: float) -> None:
    """A whole number in ``[low, high]``."""
    if type(value) is int and low <= value <= high:
        return
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(source, path, f"must be a whole number (got {value!r})")
    check_number(source, path, value, low, high)


def check_per_key(
    source: str, path: str, values: Mapping[str, Any], low: float, high: float, strict: bool
) -> None:
    """A map from non-empty names to numbers, each as in :func:`check_number`."""
    for key, value in values.items():
        check_id(source, path, key)
        check_number(source, json_child(path, key), value, low, high, strict)
