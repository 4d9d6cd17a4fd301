"""Read, check and write instances in the canonical JSON format.

Every problem is reported as one :class:`~hetsched.errors.InputError` naming the file, the
JSON path and the reason, e.g. ``small-03.json: $.jobs[3].train_time.v100: must be > 0 (got -2)``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from hetsched.errors import InputError
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.instance.schema import INSTANCE_SCHEMA
from hetsched.instance.serialize import FORMAT, dump_instance, instance_hash, instance_to_dict
from hetsched.jsonfile import json_child as _child
from hetsched.jsonfile import read_json

_VALIDATOR = jsonschema.Draft202012Validator(INSTANCE_SCHEMA)


def _json_path(err: ValidationError) -> str:
    path = "$"
    for part in err.absolute_path:
        path = f"{path}[{part}]" if isinstance(part, int) else _child(path, str(part))
    return path


def _describe(err: ValidationError) -> tuple[str, str]:
    """(JSON path, reason) in our wording for a jsonschema error."""
    path, v, got = _json_path(err), err.validator, err.instance
    shown = json.dumps(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if v == "required":
        missing = [k for k in err.validator_value if k not in got]
        return path, f"missing required field '{missing[0]}'"
    if v == "additionalProperties" and isinstance(err.validator_value, bool):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in got if k not in allowed)
        return _child(path, extra[0]), f"unknown field (allowed: {', '.join(sorted(allowed))})"
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
    return path, err.message


def parse_instance(data: Any, source: str = "<instance>", name: str | None = None) -> Instance:
    """Check a decoded JSON document against the format and build an :class:`Instance`."""
    errors = list(_VALIDATOR.iter_errors(data))
    if errors:
        # the error deepest in the document is the most specific; ties broken by document order
        err = best_match(errors, key=lambda e: (-len(e.absolute_path), 0))
        path, reason = _describe(err)
        raise InputError(source, path, reason)
    return _build(data, source, name)


def _build(data: dict[str, Any], source: str, name: str | None) -> Instance:
    def fail(path: str, reason: str) -> InputError:
        return InputError(source, path, reason)

    c = data["cluster"]
    types = {t: GpuType(t, **attrs) for t, attrs in c["gpu_types"].items()}
    servers, seen_server, seen_gpu = [], set(), {}
    for si, s in enumerate(c["servers"]):
        if s["id"] in seen_server:
            raise fail(f"$.cluster.servers[{si}].id", f"duplicate server id '{s['id']}'")
        seen_server.add(s["id"])
        gpus = []
        for gi, g in enumerate(s["gpus"]):
            gpath = f"$.cluster.servers[{si}].gpus[{gi}]"
            if g["id"] in seen_gpu:
                raise fail(
                    f"{gpath}.id", f"duplicate GPU id '{g['id']}' (also at {seen_gpu[g['id']]})"
                )
            if g["type"] not in types:
                raise fail(
                    f"{gpath}.type",
                    f"unknown GPU type '{g['type']}' (declared: {', '.join(types)})",
                )
            seen_gpu[g["id"]] = gpath
            gpus.append(Gpu(g["id"], g["type"], s["id"]))
        servers.append(Server(s["id"], tuple(gpus)))
    present = {g.type for s in servers for g in s.gpus}

    jobs, seen_job = [], set()
    for ji, j in enumerate(data["jobs"]):
        jpath = f"$.jobs[{ji}]"
        if j["id"] in seen_job:
            raise fail(f"{jpath}.id", f"duplicate job id '{j['id']}'")
        seen_job.add(j["id"])
        for key in ("train_time", "sync_time", "throughput"):
            for t in j.get(key, {}):
                if t not in types:
                    raise fail(
                        _child(f"{jpath}.{key}", t),
                        f"unknown GPU type '{t}' (declared: {', '.join(types)})",
                    )
        for key in ("train_time", "sync_time"):
            for t in sorted(present):
                if t not in j[key]:
                    raise fail(
                        f"{jpath}.{key}",
                        f"missing time for GPU type '{t}' (the cluster has GPUs of that type)",
                    )
        for key in ("train_time_per_gpu", "sync_time_per_gpu"):
            for gid in j.get(key, {}):
                if gid not in seen_gpu:
                    raise fail(_child(f"{jpath}.{key}", gid), f"unknown GPU id '{gid}'")
        m = j.get("model")
        jobs.append(
            Job(
                id=j["id"],
                arrival=float(j.get("arrival", 0.0)),
                weight=float(j.get("weight", 1.0)),
                rounds=int(j["rounds"]),
                tasks_per_round=int(j["tasks_per_round"]),
                train_time={k: float(v) for k, v in j["train_time"].items()},
                sync_time={k: float(v) for k, v in j["sync_time"].items()},
                train_time_per_gpu={
                    k: float(v) for k, v in j.get("train_time_per_gpu", {}).items()
                },
                sync_time_per_gpu={k: float(v) for k, v in j.get("sync_time_per_gpu", {}).items()},
                requested_workers=j.get("requested_workers"),
                epochs=None if j.get("epochs") is None else float(j["epochs"]),
                iterations_per_epoch=j.get("iterations_per_epoch"),
                throughput={k: float(v) for k, v in j.get("throughput", {}).items()},
                memory_gb=None if j.get("memory_gb") is None else float(j["memory_gb"]),
                model=None
                if m is None
                else ModelInfo(
                    name=m.get("name"),
                    family=m.get("family"),
                    batch_size=m.get("batch_size"),
                    features={k: float(v) for k, v in m.get("features", {}).items()},
                ),
            )
        )
    return Instance(
        name=data.get("name") or name or Path(source).stem,
        cluster=Cluster(types, tuple(servers)),
        jobs=tuple(jobs),
        description=data.get("description", ""),
        metadata=copy.deepcopy(data.get("metadata", {})),
    )


def load_instance(path: str | Path) -> Instance:
    """Load and check an instance file (see ``instances/schema.json``); a path that does not exist
    is looked up among the shipped instances by name (``hare_fig9``, ``paper/hare_fig9.json``)."""
    p = Path(path)
    if not p.exists():
        from hetsched.resources import shipped_instance

        p = shipped_instance(str(path)) or p
    return parse_instance(read_json(p), source=p.name, name=p.stem)


__all__ = [
    "FORMAT",
    "dump_instance",
    "instance_hash",
    "instance_to_dict",
    "load_instance",
    "parse_instance",
]
