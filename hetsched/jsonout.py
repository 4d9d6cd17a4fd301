"""JSON for stdout: standard JSON only. A non-finite number (inf, nan), which ``json.dumps``
would write as the non-standard ``Infinity``/``NaN``, becomes ``null`` and its JSON path is
listed under ``"non_finite"`` of the top-level object, so no reader is misled or broken."""

from __future__ import annotations

import json
import math
from typing import Any


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
