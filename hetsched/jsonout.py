"""JSON for stdout: standard JSON only. A non-finite number (inf, nan), which ``json.dumps``
would write as the non-standard ``Infinity``/``NaN``, becomes ``null`` and its JSON path is
listed under ``"non_finite"`` of the top-level object, so no reader is misled or broken."""

from __future__ import annotations

import json
import math
from typing import Any, Iterator, TextIO


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
