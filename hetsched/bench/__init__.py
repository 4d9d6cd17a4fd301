"""Benchmarks (``hetsched bench SUITE``): speed and scale measured, results as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetsched.core.jsonio import json_text, save_json


def write_result(result: dict[str, Any], out: str | Path, as_json: bool) -> Path:
    """Write a suite's result to ``out`` as indented JSON (its folder made if missing); with
    ``as_json`` also print it (non-finite numbers as null). Returns the path written."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_json(path, result, indent=1)
    if as_json:
        print(json_text(result))
    return path
