"""The job-level (gang) model of Gavel and Hadar, read from an instance.

Job j asks for s_j GPUs at once (a gang) and needs W_j units of work; with all s_j workers on
GPUs of type r it progresses at X_j^r units/s (the whole job's throughput, as Gavel measures it).
A gang over several types runs at its slowest type's pace, min_r X_j^r over the types it uses
(Hadar's bottleneck throughput, (1b)).

Where the numbers come from, per job:

* ``throughput`` for every GPU type of the cluster plus ``epochs`` x ``iterations_per_epoch``:
  X_j^r = throughput[r] (iterations/s of the whole job, Gavel's semantics), W_j = the iterations,
  s_j = ``requested_workers`` (default ``tasks_per_round``). If the instance says
  ``metadata.hadar.progress = "per-worker"`` (Hadar's (1a) as written), ``throughput`` is per GPU
  and X_j^r = s_j x throughput[r].
* otherwise Hare's fields: one round of s_j = ``tasks_per_round`` tasks on s_j type-r GPUs takes
  T^c_r + T^s_r, so W_j = ``rounds`` and X_j^r = 1 / (T^c_r + T^s_r) rounds/s (per-GPU overrides
  are ignored; a type whose train time is ``NEVER`` gets X = 0).

X = 0 means the job cannot run on that type. Both the gang engine and its validator read the
data through :func:`gang_jobs`; everything else they compute separately.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hetsched.allocation.gavel_data import NEVER
from hetsched.errors import InputError
from hetsched.instance.model import Instance


@dataclass(frozen=True)
class GangJobs:
    job_ids: tuple[str, ...]
    arrival: np.ndarray  # seconds
    weight: np.ndarray
    gang: np.ndarray  # s_j GPUs
    work: np.ndarray  # W_j units (iterations or rounds)
    throughput: np.ndarray  # X[j, r] units/s of the whole gang on type r
    types: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    gpu_type: np.ndarray  # type index of GPU g
    gpu_server: np.ndarray  # server index of GPU g
    servers: tuple[str, ...]

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def n_gpus(self) -> int:
        return len(self.gpu_ids)

    def type_count(self) -> np.ndarray:
        return np.bincount(self.gpu_type, minlength=len(self.types))

    @cached_property
    def gpus_of_type(self) -> tuple[tuple[int, ...], ...]:
        """The GPUs of each type, by index, in cluster order (policies copy them as free lists)."""
        return tuple(
            tuple(g for g in range(self.n_gpus) if self.gpu_type[g] == r)
            for r in range(len(self.types))
        )

    def rate(self, j: int, gpus) -> float:
        """Units/s of job j on these GPUs: the bottleneck min_r X_j^r over their types."""
        return float(min(self.throughput[j, self.gpu_type[g]] for g in gpus))

    def alone_seconds(self, j: int) -> float:
        """Job j alone on the cluster on its fastest gang: the q fastest types with >= s_j GPUs
        between them, at the q-th type's pace (a lower bound on any policy's JCT for the job)."""
        count = self.type_count()
        order = [
            r for r in np.argsort(-self.throughput[j], kind="stable") if self.throughput[j, r] > 0
        ]
        have = 0
        for r in order:
            have += count[r]
            if have >= self.gang[j]:
                return float(self.work[j] / self.throughput[j, r])
        return float("inf")


def gang_jobs(instance: Instance) -> GangJobs:
    """Read the gang model (module docstring); missing data is an input error naming the field."""
    gpus = instance.gpus
    types = tuple(sorted({g.type for g in gpus}))
    servers = tuple(s.id for s in instance.cluster.servers)
    server_of = {g.id: h for h, s in enumerate(instance.cluster.servers) for g in s.gpus}
    per_worker = (instance.metadata or {}).get("hadar", {}).get("progress") == "per-worker"
    thr = np.zeros((len(instance.jobs), len(types)))
    work, gang = [], []
    for j, job in enumerate(instance.jobs):
        s = job.requested_workers or job.tasks_per_round
        if job.throughput and job.epochs and job.iterations_per_epoch:
            for r, t in enumerate(types):
                if t not in job.throughput:
                    raise InputError(
                        instance.name,
                        f"$.jobs[{j}].throughput",
                        f"no throughput for GPU type '{t}' (0 = cannot run there)",
                    )
                thr[j, r] = job.throughput[t] * (s if per_worker else 1)
            work.append(job.epochs * job.iterations_per_epoch)
        else:
            for r, t in enumerate(types):
                tc, ts = job.train_time.get(t), job.sync_time.get(t, 0.0)
                if tc is None:
                    raise InputError(
                        instance.name,
                        f"$.jobs[{j}].train_time",
                        f"no train time for GPU type '{t}'",
                    )
                thr[j, r] = 0.0 if tc >= NEVER else 1.0 / (tc + ts)
            work.append(float(job.rounds))
        if not np.any(thr[j] > 0):
            raise InputError(
                instance.name,
                f"$.jobs[{j}]",
                "the job cannot run on any GPU type (throughput 0 everywhere)",
            )
        usable = sum(1 for g in gpus if thr[j, types.index(g.type)] > 0)
        if s > usable:
            raise InputError(
                instance.name,
                f"$.jobs[{j}].requested_workers",
                f"a gang of {s} GPUs, but only {usable} GPUs can run the job",
            )
        gang.append(s)
    return GangJobs(
        job_ids=tuple(j.id for j in instance.jobs),
        arrival=np.array([j.arrival for j in instance.jobs], dtype=float),
        weight=np.array([j.weight for j in instance.jobs], dtype=float),
        gang=np.array(gang, dtype=np.int64),
        work=np.array(work, dtype=float),
        throughput=thr,
        types=types,
        gpu_ids=tuple(g.id for g in gpus),
        gpu_type=np.array([types.index(g.type) for g in gpus], dtype=np.int64),
        gpu_server=np.array([server_of[g.id] for g in gpus], dtype=np.int64),
        servers=servers,
    )
