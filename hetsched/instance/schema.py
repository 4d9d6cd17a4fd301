"""JSON Schema of the canonical instance format (one source of truth).

``instances/schema.json`` is generated from :data:`INSTANCE_SCHEMA` by ``hetsched schema``;
a test keeps the two identical. Checks the schema cannot express (unique ids, GPU types
that exist, times for every type present) are made by the data model itself
(:mod:`hetsched.instance.model`), whoever builds it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hetsched.instance.extensions import SCHEMAS as EXTENSION_SCHEMAS
from hetsched.instance.model import MAX_NUMBER, MAX_TASKS_PER_ROUND

_ID = {"type": "string", "minLength": 1}
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


@cache
def instance_validator() -> Any:
    """The compiled validator of :data:`INSTANCE_SCHEMA` (jsonschema loaded on first use)."""
    import jsonschema

    return jsonschema.Draft202012Validator(INSTANCE_SCHEMA)
