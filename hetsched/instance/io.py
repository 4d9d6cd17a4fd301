"""Read, check and write instances in the canonical JSON format.

Every problem is reported as one :class:`~hetsched.core.errors.InputError` naming the file, the
JSON path and the reason, e.g. ``small-03.json: $.jobs[3].train_time.v100: must be > 0 (got -2)``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hetsched.core.errors import InputError, schema_violation
from hetsched.core.jsonio import read_json
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.instance.schema import instance_validator
from hetsched.instance.serialize import FORMAT, dump_instance, instance_hash, instance_to_dict


def parse_instance(data: Any, source: str = "<instance>", name: str | None = None) -> Instance:
    """Check a decoded JSON document against the format and build an :class:`Instance`."""
    error = schema_violation(instance_validator(), data)
    if error is not None:
        raise InputError(source, *error)
    return _build(data, source, name)


def _build(data: dict[str, Any], source: str, name: str | None) -> Instance:
    """The data model of a schema-checked document; its own checks (ids unique, types declared,
    times for every type present) are reported against ``source`` and the document's paths."""
    try:
        c = data["cluster"]
        types = {t: GpuType(t, **attrs) for t, attrs in c["gpu_types"].items()}
        servers = tuple(
            Server(s["id"], tuple(Gpu(g["id"], g["type"], s["id"]) for g in s["gpus"]))
            for s in c["servers"]
        )
        cluster = Cluster(types, servers)
        jobs = []
        for ji, j in enumerate(data["jobs"]):
            try:
                jobs.append(_job(j))
            except InputError as exc:  # a path inside the job: put it under the job's
                raise InputError(source, f"$.jobs[{ji}]{(exc.path or '$')[1:]}", exc.reason)
        return Instance(
            name=data.get("name") or name or Path(source).stem,
            cluster=cluster,
            jobs=tuple(jobs),
            description=data.get("description", ""),
            metadata=copy.deepcopy(data.get("metadata", {})),
        )
    except InputError as exc:
        if exc.source == source:
            raise
        raise InputError(source, exc.path, exc.reason) from None


def _job(j: dict[str, Any]) -> Job:
    m = j.get("model")
    return Job(
        id=j["id"],
        arrival=float(j.get("arrival", 0.0)),
        weight=float(j.get("weight", 1.0)),
        rounds=int(j["rounds"]),
        tasks_per_round=int(j["tasks_per_round"]),
        train_time={k: float(v) for k, v in j["train_time"].items()},
        sync_time={k: float(v) for k, v in j["sync_time"].items()},
        train_time_per_gpu={k: float(v) for k, v in j.get("train_time_per_gpu", {}).items()},
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


def load_instance(path: str | Path) -> Instance:
    """Load and check an instance file (see ``instances/schema.json``); a path that does not exist
    is looked up among the shipped instances by name (``hare_fig9``, ``paper/hare_fig9.json``,
    ``instances/paper/hare_fig9.json``: :func:`hetsched.core.resources.resolve_file`)."""
    from hetsched.core.resources import resolve_file

    p = resolve_file(path, "instances", ".json", "instance")
    # errors name the file as the caller gave it: two files of one name in two folders differ
    return parse_instance(read_json(p, source=str(path)), source=str(path), name=p.stem)


__all__ = [
    "FORMAT",
    "dump_instance",
    "instance_hash",
    "instance_to_dict",
    "load_instance",
    "parse_instance",
]
