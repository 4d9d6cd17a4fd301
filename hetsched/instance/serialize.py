"""Write instances: the canonical JSON form, files, and the problem's hash. Imports nothing of the
project but the data model, so that validators can name the instance a schedule belongs to
without loading the reader (:mod:`hetsched.instance.io`)."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from hetsched.instance.model import Instance

FORMAT = "hetsched.instance/1"


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    """The canonical JSON form; :func:`parse_instance` of it gives back an equal instance."""
    types = {}
    for t in inst.cluster.gpu_types.values():
        attrs = {
            k: v
            for k, v in (("memory_gb", t.memory_gb), ("cost_per_hour", t.cost_per_hour))
            if v is not None
        }
        types[t.name] = attrs
    jobs = []
    for j in inst.jobs:
        d: dict[str, Any] = {
            "id": j.id,
            "arrival": j.arrival,
            "weight": j.weight,
            "rounds": j.rounds,
            "tasks_per_round": j.tasks_per_round,
            "train_time": dict(j.train_time),
            "sync_time": dict(j.sync_time),
        }
        for key in ("train_time_per_gpu", "sync_time_per_gpu", "throughput"):
            if getattr(j, key):
                d[key] = dict(getattr(j, key))
        for key in ("requested_workers", "epochs", "iterations_per_epoch", "memory_gb"):
            if getattr(j, key) is not None:
                d[key] = getattr(j, key)
        if j.model is not None:
            m = {
                k: getattr(j.model, k)
                for k in ("name", "family", "batch_size")
                if getattr(j.model, k) is not None
            }
            if j.model.features:
                m["features"] = dict(j.model.features)
            d["model"] = m
        jobs.append(d)
    out: dict[str, Any] = {"format": FORMAT, "name": inst.name}
    if inst.description:
        out["description"] = inst.description
    if inst.metadata:
        out["metadata"] = copy.deepcopy(
            dict(inst.metadata)
        )  # a caller may edit the dict: never the instance
    out["cluster"] = {
        "gpu_types": types,
        "servers": [
            {"id": s.id, "gpus": [{"id": g.id, "type": g.type} for g in s.gpus]}
            for s in inst.cluster.servers
        ],
    }
    out["jobs"] = jobs
    return out


def dump_instance(inst: Instance, path: str | Path) -> None:
    Path(path).write_text(json.dumps(instance_to_dict(inst), indent=2) + "\n", encoding="utf-8")


def instance_hash(inst: Instance) -> str:
    """sha256 over what defines the problem (cluster and jobs), not its name or description."""
    d = instance_to_dict(inst)
    core = {"cluster": d["cluster"], "jobs": d["jobs"]}
    return hashlib.sha256(
        json.dumps(core, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:16]
