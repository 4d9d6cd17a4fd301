"""JSON in and out, one module.

*Files*: reading JSON files (every problem is one :class:`~hetsched.core.errors.InputError` naming
the file, the JSON path and the reason; instances (:mod:`hetsched.instance.io`) and solutions
(:mod:`hetsched.schedule.io`) are read through it) and writing whole JSON documents (reports,
manifests) so that an interrupted write never leaves a broken file.

*Standard output*: standard JSON only. A non-finite number (inf, nan), which ``json.dumps``
would write as the non-standard ``Infinity``/``NaN``, becomes ``null`` and its JSON path is
listed under ``"non_finite"`` of the top-level object, so no reader is misled or broken."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterator, TextIO

from hetsched.core.errors import InputError, json_child
from hetsched.core.files import write_text_atomic

__all__ = ["json_child", "json_text", "parse_json_text", "read_json", "save_json", "write_json"]


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


#: the deepest nesting a document may have: hetsched's own files nest at most about ten levels;
#: a deeper one is refused before it can exhaust the recursion of a reader or the schema check
MAX_JSON_DEPTH = 100


def parse_json_text(text: str, source: str) -> Any:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, None, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InputError(source, None, f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    _reject_non_finite(data, "$", source)
    return data


def _reject_non_finite(node: Any, path: str, source: str, depth: int = 0) -> None:
    """Python's json accepts NaN/Infinity (and 1e999 overflows to inf); JSON and we do not. A
    document nested deeper than :data:`MAX_JSON_DEPTH` is refused at its first too-deep value."""
    if isinstance(node, float) and not math.isfinite(node):
        raise InputError(source, path, f"must be a finite number (got {node})")
    if isinstance(node, (dict, list)) and depth >= MAX_JSON_DEPTH:
        raise InputError(source, path, f"nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(node, dict):
        for k, v in node.items():
            _reject_non_finite(v, json_child(path, k), source, depth + 1)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _reject_non_finite(v, f"{path}[{i}]", source, depth + 1)


def save_json(path: str | Path, obj: Any, **kwargs: Any) -> None:
    """Write ``obj`` as a JSON document (``json.dumps(obj, **kwargs)`` and a newline) that a
    reader never sees half-written: a temporary file beside it replaces it in one step."""
    write_text_atomic(path, json.dumps(obj, **kwargs) + "\n")


def _finite(node: Any, path: str, found: list[str]) -> Any:
    if isinstance(node, float) and not math.isfinite(node):
        found.append(path)
        return None
    if isinstance(node, dict):
        return {k: _finite(v, f"{path}.{k}", found) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_finite(v, f"{path}[{i}]", found) for i, v in enumerate(node)]
    return node


def json_text(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` with every non-finite number as null (listed under ``non_finite``)."""
    found: list[str] = []
    clean = _finite(obj, "$", found)
    if found and isinstance(clean, dict):
        clean["non_finite"] = found
    return json.dumps(clean, allow_nan=False, **kwargs)


def write_json(obj: Any, out: TextIO) -> None:
    """Write ``obj`` as :func:`json_text` would, without building the text or any list given as an
    iterator (a generator of rows is written row by row): the output of a million-task schedule
    is streamed. Non-finite numbers become null and are listed under ``non_finite``, written last
    in the top-level object."""
    _write(obj, "$", out, [])


def _write(node: Any, path: str, out: TextIO, found: list[str], top: bool = True) -> None:
    if isinstance(node, (dict, list, tuple)):
        try:  # the C encoder for a finite subtree without iterators (every row of a schedule)
            out.write(json.dumps(node, allow_nan=False))
            return
        except (ValueError, TypeError):
            pass  # a non-finite number to list, or an iterator to stream: node by node
    if isinstance(node, float) and not math.isfinite(node):
        found.append(path)
        out.write("null")
    elif isinstance(node, dict):
        out.write("{")
        for k, (key, value) in enumerate(node.items()):
            out.write(", " if k else "")
            out.write(json.dumps(key) + ": ")
            _write(value, f"{path}.{key}", out, found, top=False)
        if top and found:
            out.write((", " if node else "") + '"non_finite": ' + json.dumps(found))
        out.write("}")
    elif isinstance(node, (list, tuple)) or isinstance(node, Iterator):
        out.write("[")
        for k, value in enumerate(node):
            out.write(", " if k else "")
            _write(value, f"{path}[{k}]", out, found, top=False)
        out.write("]")
    else:
        out.write(json.dumps(node, allow_nan=False))
