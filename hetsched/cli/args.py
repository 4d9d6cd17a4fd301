"""Argument types (argparse ``type=``) shared by the command modules."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
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


def whole_number(low: int, high: int, shown: str = "", why: str = ""):
    """An argparse type: a whole number from ``low`` to ``high`` (``shown``: how the message
    writes ``high``; ``why``: what the limit is)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be from {low} to {shown or high}{why} (got {text})"
            )
        return value

    return parse


def count(limit: int):
    """An argparse type: a whole number from 1 to ``limit``."""
    return whole_number(1, limit)


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


#: seeds are 64-bit unsigned: numpy's generators take any integer from 0 to 2**64 - 1
MAX_SEED = 2**64 - 1


#: a seed, a whole number from 0 to 2**64 - 1 (argparse type)
seed_value = whole_number(0, MAX_SEED, "2**64 - 1")


def thread_count(text: str) -> int:
    """An argparse type: a thread count from 1 to this machine's CPU count."""
    import os

    cpus = os.cpu_count() or 1
    return whole_number(1, cpus, why=", the CPUs of this machine")(text)


#: the longest time limit taken: about 115 days (a longer one overflows the operating system's
#: timers, and no run here is meant to take that long)
MAX_SECONDS = 1e7


def seconds(text: str) -> float:
    """An argparse type: a time in seconds, finite, > 0 and at most :data:`MAX_SECONDS`."""
    value = positive(float)(text)
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS:g} s (got {text})")
    return value


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


#: the families ``bench exact --family`` runs beside the ladder (hetsched.bench.wct.SIZES; the last,
#: hare-audit-large, is hetsched.bench.relaxation's and runs alone)
BENCH_FAMILIES = ("pm-wct", "rm-wct", "hare-random", "hare-table2", "hare-audit-large")


def family_list(text: str) -> str:
    """``bench exact --family``: ``ladder`` or ``hare-audit-large`` alone, or some of the other
    :data:`BENCH_FAMILIES` comma-separated."""
    names = text.split(",")
    if text == "ladder" or (
        names
        and len(set(names)) == len(names)
        and set(names) <= set(BENCH_FAMILIES)
        and (len(names) == 1 or "hare-audit-large" not in names)
    ):
        return text
    raise argparse.ArgumentTypeError(
        f"'{text}': expected ladder, hare-audit-large, or some of "
        f"{', '.join(BENCH_FAMILIES[:-1])} separated by commas"
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
        "--time-limit", type=seconds, default=time_default, metavar="S", help=time_help
    )
    if threads:
        parser.add_argument("--threads", type=thread_count, default=None, metavar="N")
    if seed:
        parser.add_argument("--seed", type=seed_value, default=0)


def json_flag(parser: argparse.ArgumentParser, keys: str = "") -> None:
    """``--json``: print one JSON object instead of the table (``keys``: what it holds)."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object" + (f": {keys}" if keys else "")
    )


#: what the plots can be written as (matplotlib's Agg writers; a test checks each against
#: matplotlib's own list)
IMAGE_SUFFIXES = (".png", ".pdf", ".svg", ".svgz", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff")


@dataclass(frozen=True)
class Output:
    """An option that names something the command writes: checked before the command runs
    (:func:`hetsched.core.files.check_output`), against every file the command reads."""

    dest: str  # the argparse dest, e.g. "out"
    kind: str = "file"  # "file" or "dir"
    suffixes: tuple[str, ...] = ()  # the suffixes a file may have (none: any)

    @property
    def option(self) -> str:
        return "--" + self.dest.replace("_", "-")


def declare_outputs(parser: argparse.ArgumentParser, *outputs: Output) -> None:
    """Record which of ``parser``'s options are outputs, for the check before the work."""
    parser.set_defaults(outputs=outputs)


def _named_files(value: object) -> list[str]:
    values = value if isinstance(value, (list, tuple)) else [value]
    return [str(v) for v in values if isinstance(v, (str, Path)) and Path(v).is_file()]


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output of ``args`` that is one of its inputs (any other
    argument naming an existing file), lies in a missing or unwritable folder, is read-only,
    or has a suffix its writer cannot write."""
    from hetsched.core.files import check_output

    outputs = getattr(args, "outputs", ())
    dests = {o.dest for o in outputs}
    inputs = [
        f for dest, value in vars(args).items() if dest not in dests for f in _named_files(value)
    ]
    for out in outputs:
        value = getattr(args, out.dest, None)
        if value is not None:
            check_output(value, out.option, kind=out.kind, suffixes=out.suffixes, inputs=inputs)


def add_results_folder(parser: argparse.ArgumentParser) -> None:
    """``--out DIR`` and ``--json`` of the shortcut simulators (``place-sim``,
    ``similarity-sim``): the folder is declared as their output."""
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="compare.json, per-job CSVs, the JCT CDF and the run store runs.jsonl; a rerun "
        "resumes (default: nothing is written)",
    )
    parser.add_argument("--json", action="store_true")
    declare_outputs(parser, Output("out", "dir"))
