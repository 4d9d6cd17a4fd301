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
* ``metadata.placement`` (Harmony's workloads): every GPU runs the job at its standalone speed,
  X_j = b_n / ``INTERVAL_SECONDS`` epochs/s, W_j = e_n epochs, s_j = its workers; the speed
  model's interference and communication factors multiply the rate each round
  (:mod:`hetsched.sim.gang_interference`);
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

**Resized runs** (the AppSci'24 policy's decisions, Sec. 4.2). If the instance says
``metadata.gang.resize = "count"``, a policy may also run job j on n GPUs of one type r for any n
that Gavel's table measured for the job's row there; with ``"count-batch"`` also as another row
of its model family (another batch size), written as a :class:`Run`. Its rate is the measured
ratio applied to the workload's rate, in the job's own units (iterations of its own batch size):
X_j^r x T(row', r, n) b(row') / (T(row, r, s_j) b(row)), T the table's isolated throughput and b
the batch size of a row. A packed pair on n GPUs as rows (row'_j, row'_k) keeps, likewise,
X_j^r x a b(row'_j) / (T(row, r, s_j) b(row)) with (a, b) the table's pair rates.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hetsched.core.errors import InputError
from hetsched.core.indexed import GpusIndexed, JobsIndexed
from hetsched.harmony.data import INTERVAL_SECONDS, standalone_speed
from hetsched.instance.gavel_table import NEVER, parse_row
from hetsched.instance.model import MAX_NUMBER, Instance, throughput_row


@dataclass(frozen=True)
class Run:
    """The GPUs a job holds in a round, the table row it runs as (its batch size; None: its
    own; module doc) and, on Harmony's workloads, where its parameter servers go (by server
    index; None: on its workers' servers in turn, :mod:`hetsched.sim.gang_interference`). A
    plain tuple of GPUs is a run as the job's own row with the default parameter servers."""

    gpus: tuple[int, ...]
    row: str | None = None
    ps: tuple[int, ...] | None = None  # the server of each parameter server (None: the default)


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
    resize: str = "none"  # metadata.gang.resize (module doc)

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
    def server_of(self) -> list[int]:
        """``gpu_server`` as Python ints (read GPU by GPU each round)."""
        return self.gpu_server.tolist()

    @cached_property
    def gang_sizes(self) -> list[int]:
        """``gang`` as Python ints (read job by job each round)."""
        return self.gang.tolist()

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
        from hetsched.instance.gavel_table import load_throughputs

        return load_throughputs()

    @cached_property
    def _fractions(self) -> dict:
        return {}

    def run_rate(self, j: int, gpus, row: str | None = None) -> float:
        """Units/s of job j on these GPUs as table row ``row`` (None: its own): the bottleneck
        :meth:`rate` for its requested gang as itself, else a resized run on one type (module
        doc); 0 where the job cannot run so."""
        n, own = len(gpus), row is None or (bool(self.models) and row == self.models[j])
        if n == self.gang[j] and own:
            return self.rate(j, gpus)
        kinds = {self.type_of[g] for g in gpus}
        if len(kinds) != 1:
            return 0.0
        r = kinds.pop()
        return self.rows[j][r] * self.resize_fraction(j, r, n, row)

    def resize_fraction(self, j: int, r: int, n: int, row: str | None = None) -> float:
        """T(row', r, n) b(row') / (T(row, r, s_j) b(row)) (module doc): 1 for the job's own
        run, 0 for a run the workload does not allow or the table did not measure."""
        mine = self.models[j] if self.models else None
        row = row or mine
        if n == self.gang[j] and row == mine:
            return 1.0
        allowed = self.resize == "count-batch" or (self.resize == "count" and row == mine)
        if not allowed or mine is None or n < 1:
            return 0.0
        return self._scaled(mine, int(self.gang[j]), r, n, row, None)

    def _scaled(self, mine, s, r, n, row, theirs) -> float:
        """The fraction of X_j^r of job j (own row ``mine``, gang s) run on n type-r GPUs as
        ``row``, beside a job run as ``theirs`` (None: alone); 0 where not measured."""
        key = (mine, s, r, n, row, theirs)
        if key not in self._fractions:
            t, table = self.types[r], self._table
            base = table.isolated.get(t, {}).get((mine, s), 0.0)
            if theirs is None:
                got = table.isolated.get(t, {}).get((row, n), 0.0)
            else:
                pair = table.pairs.get(t, {}).get((row, n), {}).get((theirs, n))
                got = 0.0 if pair is None or min(pair) <= 0 else pair[0]
            (family, batch), (own_family, own_batch) = parse_row(row), parse_row(mine)
            ok = base > 0 and got > 0 and family == own_family
            self._fractions[key] = float(got / base * (batch / own_batch)) if ok else 0.0
        return self._fractions[key]

    def pair_fraction(
        self, j: int, k: int, r: int, n: int | None = None, rows: tuple = (None, None)
    ) -> float:
        """The fraction of X_j^r job j keeps while job k shares its gang of n type-r GPUs (n:
        their requested gang; ``rows``: the rows the two run as, None: their own; module doc); 0
        if the two cannot share: unequal or disallowed runs, a pair Gavel did not measure or
        measured as (0, 0), or too little memory. Worked out once per pair of job kinds (model,
        gang, memory: all it reads of a job)."""
        n = int(self.gang[j]) if n is None else n
        if j == k or not self.models:
            return 0.0
        kind = self._pair_kind
        key = (kind[j], kind[k], r, n, rows)
        got = self._pair_fractions.get(key)
        if got is None:
            got = self._pair_fractions[key] = self._pair_fraction(j, k, r, n, rows)
        return got

    def _pair_fraction(self, j: int, k: int, r: int, n: int, rows: tuple) -> float:
        if None in (self.models[j], self.models[k]):
            return 0.0
        row_j, row_k = rows[0] or self.models[j], rows[1] or self.models[k]
        for x, row in ((j, row_j), (k, row_k)):
            if self.resize_fraction(x, r, n, row) <= 0:
                return 0.0
        cap, mem_j, mem_k = self.type_memory_gb[r], self.memory_gb[j], self.memory_gb[k]
        if None not in (mem_j, mem_k, cap) and mem_j + mem_k > cap + 1e-9:
            return 0.0
        return self._scaled(self.models[j], int(self.gang[j]), r, n, row_j, row_k)

    @cached_property
    def _pair_kind(self) -> list[int]:
        """Each job's kind for :meth:`pair_fraction`: one number per (model, gang, memory)."""
        kinds: dict[tuple, int] = {}
        memory = self.memory_gb or (None,) * self.n_jobs
        return [
            kinds.setdefault((m, int(g), mem), len(kinds))
            for m, g, mem in zip(self.models, self.gang, memory)
        ]

    @cached_property
    def _pair_fractions(self) -> dict:
        return {}

    def pair_rate(
        self, j: int, k: int, r: int, n: int | None = None, rows: tuple = (None, None)
    ) -> float:
        """Units/s of job j while job k shares its gang of type r: X_j^r x
        :meth:`pair_fraction` (0: they cannot share)."""
        return float(self.rows[j][r] * self.pair_fraction(j, k, r, n, rows))

    def resized_runs(self, j: int) -> list[tuple[int, int, str]]:
        """Every (type r, GPU count n, row) job j may run as besides its requested gang as
        itself, where the workload allows resizing (module doc)."""
        mine = self.models[j] if self.models else None
        if self.resize == "none" or mine is None:
            return []
        family, out = parse_row(mine)[0], []
        for r, t in enumerate(self.types):
            if self.rows[j][r] <= 0:
                continue
            for row, n in self._table.isolated.get(t, {}):
                other = row != mine
                if other and (self.resize != "count-batch" or parse_row(row)[0] != family):
                    continue
                if (other or n != self.gang[j]) and self.resize_fraction(j, r, n, row) > 0:
                    out.append((r, n, row))
        return out

    def alone_seconds(self, j: int) -> float:
        """Job j alone on the cluster on its fastest gang: the q fastest types with >= s_j GPUs
        between them, at the q-th type's pace, or its fastest resized run that fits (a lower
        bound on any policy's JCT for the job)."""
        count = self.type_count()
        order = [
            r for r in np.argsort(-self.throughput[j], kind="stable") if self.throughput[j, r] > 0
        ]
        have = 0
        for r in order:
            have += count[r]
            if have >= self.gang[j]:
                best = self.throughput[j, r]
                break
        else:
            best = 0.0
        for r, n, row in self.resized_runs(j):  # a resized run may be faster
            if n <= count[r]:
                best = max(best, self.rows[j][r] * self.resize_fraction(j, r, n, row))
        return float(self.work[j] / best) if best > 0 else float("inf")


def _standalone_speed(instance: Instance, j: int, meta) -> float:
    """b_n of job j of a Harmony workload (epochs per interval): ``metadata.placement``'s, else
    its model's default (:mod:`hetsched.harmony.data`)."""
    job = instance.jobs[j]
    given = meta.jobs.get(job.id)
    speed = standalone_speed(
        given.standalone_speed if given else None, job.model.name if job.model else None
    )
    if speed is None or not job.epochs:
        raise InputError(
            instance.name,
            f"$.metadata.placement.jobs.{job.id}.standalone_speed",
            "missing (no default for this model), or the job has no epochs",
        )
    return speed


def gang_jobs(instance: Instance) -> GangJobs:
    """Read the gang model (module docstring); missing data is an input error naming the field."""
    gpus = instance.gpus
    types = tuple(sorted({g.type for g in gpus}))
    servers = tuple(s.id for s in instance.cluster.servers)
    server_of = {g.id: h for h, s in enumerate(instance.cluster.servers) for g in s.gpus}
    hadar = instance.extensions.hadar  # Hadar's reading where the workload names one
    per_worker = hadar is not None and hadar.progress == "per-worker"
    harmony = instance.extensions.placement
    thr = np.zeros((len(instance.jobs), len(types)))
    work, gang = [], []
    too_big: list[tuple[int, int, int]] = []  # (job, gang, GPUs that can run it)
    per_type = [sum(1 for g in gpus if g.type == t) for t in types]
    for j, job in enumerate(instance.jobs):
        s = job.requested_workers or job.tasks_per_round
        if harmony is not None:  # Harmony's reading: b_n epochs per interval on any GPU
            thr[j] = _standalone_speed(instance, j, harmony) / INTERVAL_SECONDS
            work.append(float(job.epochs or 0.0))
        elif job.throughput and job.epochs and job.iterations_per_epoch:
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
        row = thr[j].tolist()  # read as floats once: a trace has 100,000 jobs
        if not any(x > 0 for x in row):
            raise InputError(
                instance.name,
                f"$.jobs[{j}]",
                "the job cannot run on any GPU type (throughput 0 everywhere)",
            )
        _check_duration(instance, j, types, work[-1], row, harmony is not None)
        usable = sum(c for c, x in zip(per_type, row) if x > 0)
        if s > usable:
            too_big.append((j, s, usable))
        gang.append(s)
    data = GangJobs(
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
        resize=instance.extensions.gang.resize if instance.extensions.gang else "none",
    )
    count = data.type_count()
    for j, s, usable in too_big:  # unless the workload lets it run on fewer GPUs
        if not any(n <= count[r] for r, n, _ in data.resized_runs(j)):
            raise InputError(
                instance.name,
                f"$.jobs[{j}].requested_workers",
                f"a gang of {s} GPUs, but only {usable} GPUs can run the job",
            )
    return data


def plan_runs(
    plan: dict, data: GangJobs
) -> tuple[dict, dict[int, str], dict[int, tuple[int, ...]]]:
    """A policy's plan as (job -> GPUs, job -> the row of a resized run that names another
    row than the job's own, job -> the servers of its parameter servers where the plan says)."""
    gpus: dict[int, tuple[int, ...]] = {}
    rows: dict[int, str] = {}
    ps: dict[int, tuple[int, ...]] = {}
    for j, v in plan.items():
        if isinstance(v, Run):
            gpus[j] = tuple(v.gpus)
            if v.row is not None and v.row != data.models[j]:
                rows[j] = v.row
            if v.ps is not None:
                ps[j] = tuple(int(h) for h in v.ps)
        else:
            gpus[j] = v
    return gpus, rows, ps


def _check_duration(
    instance: Instance, j: int, types: tuple[str, ...], work: float, thr: list[float], epochs: bool
) -> None:
    """Job j's whole work at each type's speed within :data:`MAX_NUMBER` seconds, as every time
    of an instance is: a throughput of 1e-300 (not 0, which says the job cannot run there) made
    a run of some 1e300 s, which the simulator never finished and Hadar's integer slots could
    not count (an OverflowError)."""
    if all(x <= 0 or work / x <= MAX_NUMBER for x in thr):
        return  # the common case, without the job's fields
    job = instance.jobs[j]
    for r, t in enumerate(types):
        if thr[r] > 0 and work / thr[r] > MAX_NUMBER:
            field = "epochs" if epochs else "throughput" if job.throughput else "train_time"
            where = f"$.jobs[{j}].{field}" + ("" if epochs else f".{t}")
            raise InputError(
                instance.name,
                where,
                f"the job's work ({work:g}) at this speed takes {work / thr[r]:g} s on '{t}', "
                f"past the {MAX_NUMBER:g} s any time may take (a throughput of 0: it cannot run "
                "there)",
            )
