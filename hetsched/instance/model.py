"""The canonical instance: a cluster of GPUs and a workload of DL training jobs.

Times are seconds (floats). Ids are strings. The notation follows Hare (HPDC'22, Sec. 5.1):
a job n has arrival a_n, weight w_n, rounds R_n, and |D_r| parallel tasks per round; a task
of job n on GPU m trains for T^c_{n,m} and then synchronizes for T^s_{n,m}. Times are given
per GPU *type* and may be overridden per GPU id (e.g. a GPU behind a slower link).
Fields that later formulations need (requested workers, epochs, throughput, memory, model
features) are carried but not required.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Gpu:
    """One GPU: a unique id, its type, and the server that holds it."""

    id: str
    type: str
    server: str


@dataclass(frozen=True)
class Server:
    id: str
    gpus: tuple[Gpu, ...]


@dataclass(frozen=True)
class GpuType:
    """A named GPU type; attributes (memory, cost, ...) are optional metadata."""

    name: str
    memory_gb: float | None = None
    cost_per_hour: float | None = None


@dataclass(frozen=True)
class Cluster:
    gpu_types: Mapping[str, GpuType]
    servers: tuple[Server, ...]

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
