"""JSON Schema of the canonical instance format (one source of truth).

``instances/schema.json`` is generated from :data:`INSTANCE_SCHEMA` by ``hetsched schema``;
a test keeps the two identical. Checks the schema cannot express (unique ids, GPU types
that exist, times for every type present) are made by the data model itself
(:mod:`hetsched.instance.model`), whoever builds it.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hetsched.instance.extensions import SCHEMAS as EXTENSION_SCHEMAS
from hetsched.jsonfile import json_child

_ID = {"type": "string", "minLength": 1}
#: beyond this, float arithmetic on times loses whole seconds and solvers cannot represent them
MAX_NUMBER = 1e15
#: tasks of one round (parallel workers of a job): far beyond any cluster. Rounds are not capped
#: here: Gavel's traces become jobs of up to 3.6e8 rounds (iterations), which the allocation LPs
#: take in their stride; each task-level method says in its ``supports()`` what it can hold.
MAX_TASKS_PER_ROUND = 10**6
_POSITIVE = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_NUMBER}
_NON_NEGATIVE = {"type": "number", "minimum": 0, "maximum": MAX_NUMBER}
_POSITIVE_INT = {"type": "integer", "minimum": 1, "maximum": MAX_NUMBER}
_TASKS_PER_ROUND = {"type": "integer", "minimum": 1, "maximum": MAX_TASKS_PER_ROUND}


def _per_key(value_schema: dict[str, Any], what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": what,
        "additionalProperties": value_schema,
        "propertyNames": {"minLength": 1},
    }


INSTANCE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://hetsched.invalid/schema/instance.json",
    "title": "hetsched instance",
    "description": (
        "A heterogeneous GPU cluster and a workload of deep-learning training jobs. "
        "Times in seconds. Notation of Hare (HPDC'22, Table 1)."
    ),
    "type": "object",
    "required": ["cluster", "jobs"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "hetsched.instance/1"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "metadata": {
            "type": "object",
            "description": (
                "the papers' typed extensions (hetsched.instance.extensions); any other key is "
                "free-form provenance (generator, seed, source)"
            ),
            "properties": EXTENSION_SCHEMAS,
        },
        "cluster": {
            "type": "object",
            "required": ["gpu_types", "servers"],
            "additionalProperties": False,
            "properties": {
                "gpu_types": {
                    "type": "object",
                    "minProperties": 1,
                    "propertyNames": {"minLength": 1},
                    "description": "declared GPU types by name",
                    "additionalProperties": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "memory_gb": _POSITIVE,
                            "cost_per_hour": _NON_NEGATIVE,
                        },
                    },
                },
                "servers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["id", "gpus"],
                        "additionalProperties": False,
                        "properties": {
                            "id": _ID,
                            "gpus": {
                                "type": "array",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "required": ["id", "type"],
                                    "additionalProperties": False,
                                    "properties": {"id": _ID, "type": _ID},
                                },
                            },
                        },
                    },
                },
            },
        },
        "jobs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "rounds", "tasks_per_round", "train_time", "sync_time"],
                "additionalProperties": False,
                "properties": {
                    "id": _ID,
                    "arrival": {**_NON_NEGATIVE, "description": "a_n, default 0"},
                    "weight": {**_POSITIVE, "description": "w_n, default 1"},
                    "rounds": {**_POSITIVE_INT, "description": "|R_n|"},
                    "tasks_per_round": {**_TASKS_PER_ROUND, "description": "|D_r|"},
                    "train_time": _per_key(_POSITIVE, "T^c per GPU type"),
                    "sync_time": _per_key(_NON_NEGATIVE, "T^s per GPU type"),
                    "train_time_per_gpu": _per_key(_POSITIVE, "T^c overrides by GPU id"),
                    "sync_time_per_gpu": _per_key(_NON_NEGATIVE, "T^s overrides by GPU id"),
                    "requested_workers": _POSITIVE_INT,
                    "epochs": _POSITIVE,
                    "iterations_per_epoch": _POSITIVE_INT,
                    "throughput": _per_key(_NON_NEGATIVE, "iterations/s per GPU type"),
                    "memory_gb": _POSITIVE,
                    "model": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string"},
                            "family": {"type": "string"},
                            "batch_size": _POSITIVE_INT,
                            "features": _per_key({"type": "number"}, "numeric model features"),
                        },
                    },
                },
            },
        },
    },
}


#: the part of the schema an instance made in code is checked against (its extensions)
METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"metadata": INSTANCE_SCHEMA["properties"]["metadata"]},
}


def first_error(schema: str, document: Any) -> tuple[str, str] | None:
    """(JSON path, reason) in our wording of the most specific way ``document`` breaks the
    schema ``"instance"`` (:data:`INSTANCE_SCHEMA`) or ``"metadata"`` (:data:`METADATA_SCHEMA`):
    the error deepest in the document, ties broken by document order; None if it conforms."""
    from jsonschema.exceptions import best_match

    errors = list(_validator(schema).iter_errors(document))
    if not errors:
        return None
    return _describe(best_match(errors, key=lambda e: (-len(e.absolute_path), 0)))


@cache
def _validator(schema: str) -> Any:
    import jsonschema  # here, not at import: the CLI's startup does not load it

    return jsonschema.Draft202012Validator(
        {"instance": INSTANCE_SCHEMA, "metadata": METADATA_SCHEMA}[schema]
    )


def _json_path(err: Any) -> str:
    path = "$"
    for part in err.absolute_path:
        path = f"{path}[{part}]" if isinstance(part, int) else json_child(path, str(part))
    return path


def _describe(err: Any) -> tuple[str, str]:
    """(JSON path, reason) in our wording for a jsonschema error."""
    path, v, got = _json_path(err), err.validator, err.instance
    shown = json.dumps(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if v == "required":
        missing = [k for k in err.validator_value if k not in got]
        return path, f"missing required field '{missing[0]}'"
    if v == "additionalProperties" and isinstance(err.validator_value, bool):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in got if k not in allowed)
        return json_child(path, extra[0]), f"unknown field (allowed: {', '.join(sorted(allowed))})"
    if v == "type":
        kind = {
            "integer": "a whole number",
            "number": "a number",
            "string": "a string",
            "object": "an object",
            "array": "an array",
            "boolean": "true or false",
        }
        return path, f"must be {kind.get(err.validator_value, err.validator_value)} (got {shown})"
    if v == "exclusiveMinimum":
        return path, f"must be > {err.validator_value} (got {shown})"
    if v == "minimum":
        return path, f"must be >= {err.validator_value} (got {shown})"
    if v == "maximum":
        return path, f"must be <= {err.validator_value:g} (got {shown}): larger values are refused"
    if v == "minItems":
        return path, f"must have at least {err.validator_value} item(s) (got {len(got)})"
    if v == "minProperties":
        return path, f"must have at least {err.validator_value} entry (got none)"
    if v == "minLength":
        return path, "must not be empty"
    if v == "const":
        return path, f"must be {json.dumps(err.validator_value)} (got {shown})"
    if v == "enum":
        return path, f"one of {', '.join(map(str, err.validator_value))} (got {shown})"
    return path, err.message
