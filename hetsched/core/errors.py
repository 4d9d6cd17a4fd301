"""Errors a user can cause, each naming where the problem is and why: the error classes, JSON
paths (:func:`json_child`) and the wording of a JSON Schema violation (:func:`schema_violation`).
Imports nothing of the project."""

from __future__ import annotations

import json
from typing import Any


class HetschedError(Exception):
    """Base class for every error hetsched raises on purpose."""


class InputError(HetschedError):
    """Bad user input: a file, a JSON path inside it, and the reason.

    ``str(err)`` is the one line the CLI prints, e.g.
    ``small-03.json: $.jobs[3].train_time.v100: must be > 0 (got -2)``.
    """

    def __init__(self, source: str, path: str | None, reason: str) -> None:
        self.source = source
        self.path = path
        self.reason = reason
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {reason}")


class SolverError(HetschedError):
    """A solver failed or is unavailable (not a property of the instance)."""


class InstallationError(HetschedError):
    """hetsched itself is incomplete (a shipped file or module is missing): not the user's input."""


def expect_format(data: Any, expected: str, source: str) -> dict:
    """``data`` if it is a JSON object whose ``format`` is ``expected``, else an input error."""
    if not isinstance(data, dict) or data.get("format") != expected:
        raise InputError(source, "$.format", f"expected '{expected}'")
    return data


def json_child(path: str, key: str) -> str:
    """The JSON path of ``key`` under ``path`` (``$.a.b``, or ``$.a['odd key']``)."""
    return (
        f"{path}.{key}" if key.replace("_", "").replace("-", "").isalnum() else f"{path}[{key!r}]"
    )


def schema_violation(validator: Any, document: Any) -> tuple[str, str] | None:
    """(JSON path, reason) in our wording of the most specific way ``document`` breaks the
    schema of a jsonschema ``validator`` (the error deepest in the document, ties broken by
    document order), or None if it conforms."""
    from jsonschema.exceptions import best_match

    errors = list(validator.iter_errors(document))
    if not errors:
        return None
    return _describe(best_match(errors, key=lambda e: (-len(e.absolute_path), 0)))


def _json_path(err: Any) -> str:
    path = "$"
    for part in err.absolute_path:
        path = f"{path}[{part}]" if isinstance(part, int) else json_child(path, str(part))
    return path


_KINDS = {
    "integer": "a whole number",
    "number": "a number",
    "string": "a string",
    "object": "an object",
    "array": "an array",
    "boolean": "true or false",
}


def _describe(err: Any) -> tuple[str, str]:
    """(JSON path, reason) in our wording for a jsonschema error."""
    path, v, got, want = _json_path(err), err.validator, err.instance, err.validator_value
    shown = json.dumps(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if v == "required":
        return path, f"missing required field '{next(k for k in want if k not in got)}'"
    if v == "additionalProperties" and isinstance(want, bool):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in got if k not in allowed)
        return json_child(path, extra[0]), f"unknown field (allowed: {', '.join(sorted(allowed))})"
    reasons = {
        "type": lambda: f"must be {_KINDS.get(want, want)} (got {shown})",
        "exclusiveMinimum": lambda: f"must be > {want} (got {shown})",
        "minimum": lambda: f"must be >= {want} (got {shown})",
        "maximum": lambda: f"must be <= {want:g} (got {shown}): larger values are refused",
        "minItems": lambda: f"must have at least {want} item(s) (got {len(got)})",
        "minProperties": lambda: f"must have at least {want} entry (got none)",
        "minLength": lambda: "must not be empty",
        "const": lambda: f"must be {json.dumps(want)} (got {shown})",
        "enum": lambda: f"one of {', '.join(map(str, want))} (got {shown})",
    }
    return path, reasons[v]() if v in reasons else err.message
