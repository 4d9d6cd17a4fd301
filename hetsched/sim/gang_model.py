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

**Packing** (space sharing, Gavel Sec. 3.1; the AppSci'24 policy's Algorithm 3): two jobs may
hold the *same* gang of GPUs at once if both are gangs of s GPUs of one type r and Gavel's table
measured the pair there, ((row_j, s), (row_k, s)) -> (a, b) with a, b > 0 (Gavel writes (0, 0)
for a pair that cannot run together; if both jobs and the type give ``memory_gb``, the two must
also fit in memory). While both hold the gang, job j progresses at X_j^r a / T_j^r, where
T_j^r is the table's isolated throughput of (row_j, s) on r: the measured slowdown applied to
the workload's own rate (:meth:`GangJobs.pair_rate`). The row is the job's ``model.name``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hetsched.allocation.gavel_data import NEVER
from hetsched.errors import InputError
from hetsched.indexed import GpusIndexed, JobsIndexed
from hetsched.instance.model import Instance
from hetsched.instance.throughput import throughput_row


@dataclass(frozen=True)
class GangJobs(JobsIndexed, GpusIndexed):
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
    models: tuple[str | None, ...] = ()  # model.name: the job's row of Gavel's table (packing)
    memory_gb: tuple[float | None, ...] = ()
    type_memory_gb: tuple[float | None, ...] = ()

    def type_count(self) -> np.ndarray:
        return np.bincount(self.gpu_type, minlength=len(self.types))

    @cached_property
    def gpus_of_type(self) -> tuple[tuple[int, ...], ...]:
        """The GPUs of each type, by index, in cluster order (policies copy them as free lists)."""
        return tuple(
            tuple(g for g in range(self.n_gpus) if self.gpu_type[g] == r)
            for r in range(len(self.types))
        )

    @cached_property
    def type_of(self) -> list[int]:
        """``gpu_type`` as Python ints (what the engine reads GPU by GPU)."""
        return self.gpu_type.tolist()

    @cached_property
    def rows(self) -> list[list[float]]:
        """``throughput`` as Python floats, row j = job j (read once per job and round)."""
        return self.throughput.tolist()

    def rate(self, j: int, gpus) -> float:
        """Units/s of job j on these GPUs: the bottleneck min_r X_j^r over their types."""
        row, type_of = self.rows[j], self.type_of
        return min(row[type_of[g]] for g in gpus)

    @cached_property
    def _table(self):
        from hetsched.allocation.gavel_data import load_throughputs

        return load_throughputs()

    @cached_property
    def _fractions(self) -> dict:
        return {}

    def pair_fraction(self, j: int, k: int, r: int) -> float:
        """a / T_j^r: the fraction of its own rate job j keeps while job k shares its gang of
        type r (module doc); 0 if the two cannot share: other gang sizes, a pair Gavel did not
        measure or measured as (0, 0), or too little memory."""
        s = int(self.gang[j])
        if j == k or s != self.gang[k] or not self.models:
            return 0.0
        key = (self.models[j], self.models[k], s, r, self.memory_gb[j], self.memory_gb[k])
        if key not in self._fractions:
            self._fractions[key] = self._fraction(*key)
        return self._fractions[key]

    def _fraction(self, mine, theirs, s, r, mem_j, mem_k) -> float:
        if mine is None or theirs is None:
            return 0.0
        cap = self.type_memory_gb[r]
        if None not in (mem_j, mem_k, cap) and mem_j + mem_k > cap + 1e-9:
            return 0.0
        t = self.types[r]
        pair = self._table.pairs.get(t, {}).get((mine, s), {}).get((theirs, s))
        alone = self._table.isolated.get(t, {}).get((mine, s), 0.0)
        if pair is None or min(pair) <= 0 or alone <= 0:
            return 0.0
        return float(pair[0] / alone)

    def pair_rate(self, j: int, k: int, r: int) -> float:
        """Units/s of job j while job k shares its gang of type r: X_j^r x
        :meth:`pair_fraction` (0: they cannot share)."""
        return float(self.throughput[j, r] * self.pair_fraction(j, k, r))

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
    hadar = instance.extensions.hadar  # Hadar's reading where the workload names one
    per_worker = hadar is not None and hadar.progress == "per-worker"
    thr = np.zeros((len(instance.jobs), len(types)))
    work, gang = [], []
    for j, job in enumerate(instance.jobs):
        s = job.requested_workers or job.tasks_per_round
        if job.throughput and job.epochs and job.iterations_per_epoch:
            thr[j] = throughput_row(instance, j, types) * (s if per_worker else 1)
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
        models=tuple(j.model.name if j.model else None for j in instance.jobs),
        memory_gb=tuple(j.memory_gb for j in instance.jobs),
        type_memory_gb=tuple(
            instance.cluster.gpu_types[t].memory_gb if t in instance.cluster.gpu_types else None
            for t in types
        ),
    )
