"""Reading JSON files (every problem is one :class:`~hetsched.errors.InputError` naming the
file, the JSON path and the reason. Instances (:mod:`hetsched.instance.io`) and solutions
(:mod:`hetsched.schedule`) are read through it) and writing whole JSON documents (reports,
manifests) so that an interrupted write never leaves a broken file."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from hetsched.errors import InputError, json_child

__all__ = ["json_child", "parse_json_text", "read_json", "save_json"]


def read_json(path: str | Path, source: str | None = None) -> Any:
    """Parse a JSON file; non-JSON and unreadable files raise :class:`InputError` naming
    ``source`` (default: the path as given)."""
    p = Path(path)
    source = str(path) if source is None else source
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(source, None, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            source, None, f"cannot read file ({exc.__class__.__name__}: {exc})"
        ) from None
    return parse_json_text(text, source)


def parse_json_text(text: str, source: str) -> Any:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, None, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    _reject_non_finite(data, "$", source)
    return data


def _reject_non_finite(node: Any, path: str, source: str) -> None:
    """Python's json accepts NaN/Infinity (and 1e999 overflows to inf); JSON and we do not."""
    if isinstance(node, float) and not math.isfinite(node):
        raise InputError(source, path, f"must be a finite number (got {node})")
    if isinstance(node, dict):
        for k, v in node.items():
            _reject_non_finite(v, json_child(path, k), source)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _reject_non_finite(v, f"{path}[{i}]", source)


def save_json(path: str | Path, obj: Any, **kwargs: Any) -> None:
    """Write ``obj`` as a JSON document (``json.dumps(obj, **kwargs)`` and a newline) that a
    reader never sees half-written: a temporary file beside it replaces it in one step."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(json.dumps(obj, **kwargs) + "\n", encoding="utf-8")
    os.replace(tmp, p)
