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
