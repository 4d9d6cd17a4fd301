"""Argument types (argparse ``type=``) shared by the command modules."""

from __future__ import annotations

import argparse
import json
import math
from typing import Callable, Sequence


def name_list(known: Sequence[str], what: str = "name") -> Callable[[str], list[str]]:
    """An argparse type: comma-separated names, each one of ``known``."""

    def parse(text: str) -> list[str]:
        names = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in names if x not in known]
        if bad or not names:
            raise argparse.ArgumentTypeError(
                f"unknown {what} '{bad[0] if bad else text}' (known: {', '.join(known)})"
            )
        return names

    return parse


def positive_int_list(text: str) -> list[int]:
    """An argparse type: comma-separated positive integers, e.g. ``2,4,8``."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers, got '{text}'"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers, got '{text}'"
        )
    return values


#: the most jobs, GPUs and servers a generated workload or instance may ask for: past these the
#: generator alone fills gigabytes (10^9 jobs: 8 GB in 40 s) before any method can refuse
MAX_JOBS, MAX_GPUS, MAX_SERVERS = 200_000, 100_000, 10_000


def count(limit: int):
    """An argparse type: a whole number from 1 to ``limit``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(f"must be from 1 to {limit} (got {text})")
        return value

    return parse


def positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be a finite number > 0 (got {text})")
        return value

    return parse


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (got {text})")
    return value


def model_option(text: str) -> tuple[str, object]:
    """NAME=VALUE; VALUE read as JSON (true, 3, 0.5, "x") or else kept as a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (got {text!r})")
    try:
        return name, json.loads(raw)
    except json.JSONDecodeError:
        return name, raw


def family_list(text: str) -> str:
    """``bench exact --family``: ``ladder`` alone, or ``pm-wct`` and/or ``rm-wct`` comma-separated."""
    names = text.split(",")
    if text == "ladder" or (
        names and len(set(names)) == len(names) and set(names) <= {"pm-wct", "rm-wct"}
    ):
        return text
    raise argparse.ArgumentTypeError(
        f"'{text}': expected ladder, or pm-wct and/or rm-wct separated by commas"
    )


def policy_list(text: str) -> list[str]:
    """Comma-separated policy names; a tiresias threshold list (``tiresias:3600,36000``) keeps its commas."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if out and out[-1].startswith("tiresias:") and part.replace(".", "", 1).isdigit():
            out[-1] += "," + part
        else:
            out.append(part)
    return out


def add_solver_limits(
    parser: argparse.ArgumentParser,
    time_help: str,
    time_default: float | None = None,
    threads: bool = True,
    seed: bool = False,
) -> None:
    """--time-limit S (and --threads N, --seed): the options every command that solves shares."""
    parser.add_argument(
        "--time-limit", type=positive(float), default=time_default, metavar="S", help=time_help
    )
    if threads:
        parser.add_argument("--threads", type=positive(int), default=None, metavar="N")
    if seed:
        parser.add_argument("--seed", type=int, default=0)


def json_flag(parser: argparse.ArgumentParser, keys: str = "") -> None:
    """``--json``: print one JSON object instead of the table (``keys``: what it holds)."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object" + (f": {keys}" if keys else "")
    )
