"""Argument types shared by the command modules."""

from __future__ import annotations

import argparse
from typing import Callable, Sequence


def name_list(known: Sequence[str], what: str = "name") -> Callable[[str], list[str]]:
    """An argparse type: comma-separated names, each one of ``known``."""
    def parse(text: str) -> list[str]:
        names = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in names if x not in known]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"unknown {what} '{bad[0] if bad else text}' (known: {', '.join(known)})")
        return names
    return parse


def positive_int_list(text: str) -> list[int]:
    """An argparse type: comma-separated positive integers, e.g. ``2,4,8``."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got '{text}'") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got '{text}'")
    return values
