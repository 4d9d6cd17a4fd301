"""The canonical instance: a cluster of GPUs and a workload of DL training jobs.

Times are seconds (floats). Ids are strings. The notation follows Hare (HPDC'22, Sec. 5.1):
a job n has arrival a_n, weight w_n, rounds R_n, and |D_r| parallel tasks per round; a task
of job n on GPU m trains for T^c_{n,m} and then synchronizes for T^s_{n,m}. Times are given
per GPU *type* and may be overridden per GPU id (e.g. a GPU behind a slower link).
Fields that later formulations need (requested workers, epochs, throughput, memory, model
features) are carried but not required.

Every object is checked when it is made, by whatever code makes it (the file loader, a
generator, a simulator, a notebook): values as the JSON schema bounds them, then ids unique,
GPU types declared, times for every GPU type present. A failure is one
:class:`~hetsched.core.errors.InputError` naming the object and the JSON path
(the wording of the file loader); the loader reports it against the file.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from hetsched.core.errors import InputError, json_child, schema_violation
from hetsched.instance.extensions import SCHEMAS as EXTENSION_SCHEMAS
from hetsched.instance.extensions import Extensions, extensions_of, metadata_validator

if TYPE_CHECKING:
    import numpy as np

#: beyond this, float arithmetic on times loses whole seconds and solvers cannot represent them
MAX_NUMBER = 1e15
#: tasks of one round (parallel workers of a job): far beyond any cluster. Rounds are not capped
#: here: Gavel's traces become jobs of up to 3.6e8 rounds (iterations), which the allocation LPs
#: take in their stride; each task-level method says in its ``supports()`` what it can hold.
MAX_TASKS_PER_ROUND = 10**6
#: a train time must be at least this fraction of the instance's time span (the latest of the
#: jobs' arrival plus its tasks one after another at its fastest): a shorter one vanishes in a
#: float sum there (5 + 1e-300 == 5), and its tasks, of zero length, overlap whatever else runs
#: on their GPU. 2^-50 leaves 8 units of the last place at the span's end (a 1 s task beside one
#: of 1e15 s, the largest time taken, still counts)
MIN_TIME_FRACTION = 2.0**-50


def _check_id(source: str, path: str, value: Any) -> None:
    """An id: a non-empty string."""
    if not isinstance(value, str) or not value:
        raise InputError(source, path, f"must be a non-empty string (got {value!r})")


def _check_number(
    source: str, path: str, value: Any, low: float, high: float, strict: bool = False
) -> None:
    """A finite number in ``[low, high]`` (``(low, high]`` if ``strict``)."""
    kind = type(value)
    if (
        (kind is float or kind is int)
        and (low < value if strict else low <= value)
        and value <= high
    ):
        return  # the common case in one test (NaN and inf fail it)
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(source, path, f"must be a number (got {value!r})")
    if not math.isfinite(value):
        raise InputError(source, path, f"must be a finite number (got {float(value)})")
    if value < low or (strict and value == low):
        raise InputError(source, path, f"must be {'>' if strict else '>='} {low:g} (got {value:g})")
    if value > high:
        raise InputError(
            source, path, f"must be <= {high:g} (got {value:g}): larger values are refused"
        )


def _check_whole(source: str, path: str, value: Any, low: int, high: float) -> None:
    """A whole number in ``[low, high]``."""
    if type(value) is int and low <= value <= high:
        return
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(source, path, f"must be a whole number (got {value!r})")
    _check_number(source, path, value, low, high)


def _check_per_key(
    source: str, path: str, values: Mapping[str, Any], low: float, high: float, strict: bool
) -> None:
    """A map from non-empty names to numbers, each as in :func:`_check_number`."""
    for key, value in values.items():
        _check_id(source, path, key)
        _check_number(source, json_child(path, key), value, low, high, strict)


@dataclass(frozen=True)
class Gpu:
    """One GPU: a unique id, its type, and the server that holds it."""

    id: str
    type: str
    server: str

    def __post_init__(self) -> None:
        _check_id(f"GPU {self.id!r}", "$.id", self.id)
        _check_id(f"GPU {self.id!r}", "$.type", self.type)


@dataclass(frozen=True)
class Server:
    id: str
    gpus: tuple[Gpu, ...]

    def __post_init__(self) -> None:
        src = f"server {self.id!r}"
        _check_id(src, "$.id", self.id)
        if not self.gpus:
            raise InputError(src, "$.gpus", "must have at least 1 item(s) (got 0)")
        for gi, g in enumerate(self.gpus):
            if g.server != self.id:
                raise InputError(src, f"$.gpus[{gi}]", f"GPU {g.id!r} names server {g.server!r}")


@dataclass(frozen=True)
class GpuType:
    """A named GPU type; attributes (memory, cost, ...) are optional metadata."""

    name: str
    memory_gb: float | None = None
    cost_per_hour: float | None = None

    def __post_init__(self) -> None:
        src = f"GPU type {self.name!r}"
        _check_id(src, "$.name", self.name)
        if self.memory_gb is not None:
            _check_number(src, "$.memory_gb", self.memory_gb, 0, MAX_NUMBER, strict=True)
        if self.cost_per_hour is not None:
            _check_number(src, "$.cost_per_hour", self.cost_per_hour, 0, MAX_NUMBER)


@dataclass(frozen=True)
class Cluster:
    gpu_types: Mapping[str, GpuType]
    servers: tuple[Server, ...]

    def __post_init__(self) -> None:
        src = "cluster"
        if not self.gpu_types:
            raise InputError(src, "$.cluster.gpu_types", "must have at least 1 entry (got none)")
        for name, t in self.gpu_types.items():
            if t.name != name:
                raise InputError(src, json_child("$.cluster.gpu_types", name), f"names {t.name!r}")
        if not self.servers:
            raise InputError(src, "$.cluster.servers", "must have at least 1 item(s) (got 0)")
        seen_server: set[str] = set()
        seen_gpu: dict[str, str] = {}
        for si, s in enumerate(self.servers):
            if s.id in seen_server:
                raise InputError(
                    src, f"$.cluster.servers[{si}].id", f"duplicate server id '{s.id}'"
                )
            seen_server.add(s.id)
            for gi, g in enumerate(s.gpus):
                gpath = f"$.cluster.servers[{si}].gpus[{gi}]"
                if g.id in seen_gpu:
                    raise InputError(
                        src, f"{gpath}.id", f"duplicate GPU id '{g.id}' (also at {seen_gpu[g.id]})"
                    )
                if g.type not in self.gpu_types:
                    raise InputError(
                        src,
                        f"{gpath}.type",
                        f"unknown GPU type '{g.type}' (declared: {', '.join(self.gpu_types)})",
                    )
                seen_gpu[g.id] = gpath

    @property
    def gpus(self) -> tuple[Gpu, ...]:
        """All GPUs in file order (server by server)."""
        return tuple(g for s in self.servers for g in s.gpus)


@dataclass(frozen=True)
class ModelInfo:
    """What is known of the job's DL model (used by similarity-based policies)."""

    name: str | None = None
    family: str | None = None
    batch_size: int | None = None
    features: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.batch_size is not None:
            _check_whole("model", "$.batch_size", self.batch_size, 1, MAX_NUMBER)
        _check_per_key("model", "$.features", self.features, -MAX_NUMBER, MAX_NUMBER, False)


@dataclass(frozen=True)
class Job:
    """A training job in Hare's notation (Table 1); optional fields serve other papers."""

    id: str
    arrival: float
    weight: float
    rounds: int
    tasks_per_round: int
    train_time: Mapping[str, float]
    sync_time: Mapping[str, float]
    train_time_per_gpu: Mapping[str, float] = field(default_factory=dict)
    sync_time_per_gpu: Mapping[str, float] = field(default_factory=dict)
    requested_workers: int | None = None
    epochs: float | None = None
    iterations_per_epoch: int | None = None
    throughput: Mapping[str, float] = field(default_factory=dict)
    memory_gb: float | None = None
    model: ModelInfo | None = None

    def __post_init__(self) -> None:
        src = f"job {self.id!r}"
        _check_id(src, "$.id", self.id)
        _check_number(src, "$.arrival", self.arrival, 0, MAX_NUMBER)
        _check_number(src, "$.weight", self.weight, 0, MAX_NUMBER, strict=True)
        _check_whole(src, "$.rounds", self.rounds, 1, MAX_NUMBER)
        _check_whole(src, "$.tasks_per_round", self.tasks_per_round, 1, MAX_TASKS_PER_ROUND)
        _check_per_key(src, "$.train_time", self.train_time, 0, MAX_NUMBER, True)
        _check_per_key(src, "$.sync_time", self.sync_time, 0, MAX_NUMBER, False)
        _check_per_key(src, "$.train_time_per_gpu", self.train_time_per_gpu, 0, MAX_NUMBER, True)
        _check_per_key(src, "$.sync_time_per_gpu", self.sync_time_per_gpu, 0, MAX_NUMBER, False)
        _check_per_key(src, "$.throughput", self.throughput, 0, MAX_NUMBER, False)
        for name, value, whole in (
            ("requested_workers", self.requested_workers, True),
            ("epochs", self.epochs, False),
            ("iterations_per_epoch", self.iterations_per_epoch, True),
            ("memory_gb", self.memory_gb, False),
        ):
            if value is None:
                continue
            if whole:
                _check_whole(src, f"$.{name}", value, 1, MAX_NUMBER)
            else:
                _check_number(src, f"$.{name}", value, 0, MAX_NUMBER, strict=True)

    @property
    def n_tasks(self) -> int:
        return self.rounds * self.tasks_per_round


@dataclass(frozen=True)
class Instance:
    """A scheduling instance. ``name`` and ``description`` do not affect the hash."""

    name: str
    cluster: Cluster
    jobs: tuple[Job, ...]
    description: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_gpu_by_id", {g.id: g for g in self.cluster.gpus})
        object.__setattr__(self, "_job_by_id", {j.id: j for j in self.jobs})
        self._check_jobs()
        object.__setattr__(self, "_extensions", self._read_extensions())

    @property
    def extensions(self) -> Extensions:
        """The papers' typed data under ``metadata`` (:mod:`hetsched.instance.extensions`)."""
        return self._extensions  # type: ignore[attr-defined]

    def _read_extensions(self) -> Extensions:
        """Check the extensions against their schema and against this instance's ids."""
        meta = self.metadata or {}
        if not any(k in meta for k in EXTENSION_SCHEMAS):
            return Extensions()
        src = self.name or "instance"
        error = schema_violation(metadata_validator(), {"metadata": meta})
        if error is not None:
            raise InputError(src, *error)
        ext = extensions_of(meta)
        if ext.packing is not None:
            used: set[str] = set()
            for jid, gid in ext.packing.scheduled.items():
                path = json_child("$.metadata.packing.scheduled", jid)
                if jid not in self._job_by_id:  # type: ignore[attr-defined]
                    raise InputError(src, path, "unknown job")
                if gid not in self._gpu_by_id:  # type: ignore[attr-defined]
                    raise InputError(src, path, f"unknown GPU '{gid}'")
                if gid in used:
                    raise InputError(src, path, f"GPU '{gid}' already holds a scheduled job")
                used.add(gid)
        if ext.placement is not None:
            servers = {s.id for s in self.cluster.servers}
            for sid in ext.placement.servers:
                if sid not in servers:
                    raise InputError(
                        src, json_child("$.metadata.placement.servers", sid), "unknown server"
                    )
            for jid, pj in ext.placement.jobs.items():
                path = json_child("$.metadata.placement.jobs", jid)
                if jid not in self._job_by_id:  # type: ignore[attr-defined]
                    raise InputError(src, path, "unknown job")
                for sid in pj.placed or {}:
                    if sid not in servers:
                        raise InputError(src, json_child(f"{path}.placed", sid), "unknown server")
        return ext

    def _check_jobs(self) -> None:
        """Job ids unique; times and throughputs for declared GPU types; train and sync times
        for every type the cluster has; per-GPU overrides for GPUs that exist."""
        src, types = self.name or "instance", self.cluster.gpu_types
        if not self.jobs:
            raise InputError(src, "$.jobs", "must have at least 1 item(s) (got 0)")
        present = sorted({g.type for g in self.cluster.gpus})
        seen: set[str] = set()
        for ji, j in enumerate(self.jobs):
            jpath = f"$.jobs[{ji}]"
            if j.id in seen:
                raise InputError(src, f"{jpath}.id", f"duplicate job id '{j.id}'")
            seen.add(j.id)
            for key in ("train_time", "sync_time", "throughput"):
                for t in getattr(j, key):
                    if t not in types:
                        raise InputError(
                            src,
                            json_child(f"{jpath}.{key}", t),
                            f"unknown GPU type '{t}' (declared: {', '.join(types)})",
                        )
            for key in ("train_time", "sync_time"):
                for t in present:
                    if t not in getattr(j, key):
                        raise InputError(
                            src,
                            f"{jpath}.{key}",
                            f"missing time for GPU type '{t}' (the cluster has GPUs of that type)",
                        )
            for key in ("train_time_per_gpu", "sync_time_per_gpu"):
                for gid in getattr(j, key):
                    if gid not in self._gpu_by_id:  # type: ignore[attr-defined]
                        raise InputError(
                            src, json_child(f"{jpath}.{key}", gid), f"unknown GPU id '{gid}'"
                        )
        self._check_resolvable(src)

    def _check_resolvable(self, src: str) -> None:
        """Every train time at least :data:`MIN_TIME_FRACTION` of the instance's time span."""
        span = max(
            (j.arrival + j.n_tasks * min(j.train_time.values(), default=0.0) for j in self.jobs),
            default=0.0,
        )
        least = MIN_TIME_FRACTION * max(1.0, span)
        for ji, j in enumerate(self.jobs):
            for key in ("train_time", "train_time_per_gpu"):
                for t, value in getattr(j, key).items():
                    if value < least:
                        raise InputError(
                            src,
                            json_child(f"$.jobs[{ji}].{key}", t),
                            f"{value:g} s is below 2^-50 of the instance's time span "
                            f"({span:g} s), too short for floating-point times to resolve",
                        )

    @property
    def gpus(self) -> tuple[Gpu, ...]:
        return self.cluster.gpus

    def gpu(self, gpu_id: str) -> Gpu:
        return self._gpu_by_id[gpu_id]  # type: ignore[attr-defined]

    def job(self, job_id: str) -> Job:
        return self._job_by_id[job_id]  # type: ignore[attr-defined]

    def has_gpu(self, gpu_id: str) -> bool:
        return gpu_id in self._gpu_by_id  # type: ignore[attr-defined]

    def has_job(self, job_id: str) -> bool:
        return job_id in self._job_by_id  # type: ignore[attr-defined]

    def train_time(self, job_id: str, gpu_id: str) -> float:
        """T^c_{n,m}: the per-GPU override if given, else the time of the GPU's type."""
        job = self.job(job_id)
        if gpu_id in job.train_time_per_gpu:
            return job.train_time_per_gpu[gpu_id]
        return job.train_time[self.gpu(gpu_id).type]

    def sync_time(self, job_id: str, gpu_id: str) -> float:
        """T^s_{n,m}: the per-GPU override if given, else the time of the GPU's type."""
        job = self.job(job_id)
        if gpu_id in job.sync_time_per_gpu:
            return job.sync_time_per_gpu[gpu_id]
        return job.sync_time[self.gpu(gpu_id).type]

    @property
    def n_tasks(self) -> int:
        return sum(j.n_tasks for j in self.jobs)


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


def instance_hash(inst: Instance) -> str:
    """sha256 over what defines the problem (cluster and jobs), not its name or description.
    Worked out once per instance (an instance is immutable) and kept on it."""
    known = inst.__dict__.get("_hash")
    if known is not None:
        return known
    d = instance_to_dict(inst)
    core = {"cluster": d["cluster"], "jobs": d["jobs"]}
    digest = hashlib.sha256(
        json.dumps(core, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:16]
    object.__setattr__(inst, "_hash", digest)
    return digest


def throughput_row(instance: Instance, j: int, types: Sequence[str]) -> np.ndarray:
    """Job j's throughput on each of ``types``, in that order (0: it cannot run there): the X_{j,r}
    that Gavel's LPs, Hadar and the gang simulator read. A type with no throughput in the file
    is an input error naming ``$.jobs[j].throughput``."""
    import numpy as np  # here, so that reading an instance does not load numpy

    given = instance.jobs[j].throughput
    for t in types:
        if t not in given:
            raise InputError(
                instance.name,
                f"$.jobs[{j}].throughput",
                f"no throughput for GPU type '{t}' (one per type present; 0 = cannot run there)",
            )
    return np.array([given[t] for t in types], dtype=float)
