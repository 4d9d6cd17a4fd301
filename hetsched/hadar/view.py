"""Hadar's view of an instance (Sec. III.A, Table I).

Machines h with c_h^r GPUs of type r (the servers of the cluster); time slots 1..T of length L
seconds; job j arrives in slot a_j, asks for W_j GPUs (gang), needs E_j N_j iterations, and runs
X_j^r iterations/s on a type-r GPU.

Where the instance comes from and what the paper leaves open (decided here, in the instance's
``metadata["hadar"]``):

* ``slot_seconds`` L (default 360: Hadar's 6-minute rounds) and ``horizon_slots`` T (default: the
  slots the slowest job needs alone after the last arrival, run one after another -- enough for
  every job to finish).
* a_j = floor(arrival / L) + 1: a job arriving inside a slot can start at the next slot boundary.
* ``progress``: (1a) multiplies the bottleneck throughput x_j(t) by the number of workers,
  Sum_h Sum_r w (iterations per GPU); Fig. 1's numbers instead advance a job by x_j(t) per
  slot (J1 loses 20 epochs per round on P100s). ``"per-worker"`` (default, as (1a) is written)
  or ``"bottleneck"`` (as Fig. 1 counts).
* JCT of a job finishing in slot f_j is (f_j - a_j + 1) L: slots are whole (1c gives the last slot).
  ``jct``: ``"f-a+1"`` (default, that reading) or ``"f-a"`` (the paper's literal U_j(f_j - a_j));
  under the literal reading a job cannot finish in its arrival slot (its JCT would be 0).
* ``utility``: U_j, one of :data:`UTILITY_NAMES` (defined in :mod:`hetsched.hadar.utility`) (default the paper's
  effective throughput); every model, the online algorithm and the validator use it.

Gangs of one slot (:func:`cheapest_gangs`): for each throughput level of a job, the cheapest W_j
GPUs at given prices -- the building block of Hadar's pricing (4) and of a job's fastest run on
the empty cluster (:func:`fastest_rate`, which the utilities need).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import islice

import numpy as np

from hetsched.errors import InputError
from hetsched.instance.model import Instance

#: the utilities U_j an instance may name (``metadata.hadar.utility``); their formulas: hetsched.hadar.utility
#: the readings of the JCT of a job finishing in slot f_j, and their offsets
JCT_READINGS = {"f-a+1": 1, "f-a": 0}
UTILITY_NAMES = ("effective-throughput", "reciprocal-jct", "finish-time-fairness")


@dataclass(frozen=True)
class HadarView:
    job_ids: tuple[str, ...]
    machines: tuple[str, ...]
    types: tuple[str, ...]
    capacity: np.ndarray  # c[h, r]
    arrival: np.ndarray  # a_j (slot, 1-based)
    workers: np.ndarray  # W_j
    work: np.ndarray  # E_j N_j iterations
    throughput: np.ndarray  # X[j, r] iterations/s per GPU
    slot_seconds: float  # L
    horizon: int  # T
    progress: str  # "per-worker" | "bottleneck"
    utility: str = "effective-throughput"  # U_j, one of UTILITY_NAMES
    jct_offset: int = 1  # JCT = (f - a + jct_offset) L: 1 ("f-a+1", default) or 0 ("f-a")

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    def jct(self, j: int, finish: int) -> float:
        """The JCT in seconds of job j finishing in slot ``finish``: (f_j - a_j + 1) L, or
        (f_j - a_j) L under the literal reading (module doc)."""
        return float(finish - self.arrival[j] + self.jct_offset) * self.slot_seconds

    def rate(self, j: int, used_types: list[int], n_workers: int) -> float:
        """Iterations per slot for job j on GPUs of ``used_types`` (x_j(t) of (1b), times L)."""
        x = min(self.throughput[j, r] for r in used_types)
        return x * self.slot_seconds * (n_workers if self.progress == "per-worker" else 1)


def hadar_view(instance: Instance) -> HadarView:
    opts = dict(instance.metadata.get("hadar", {})) if instance.metadata else {}
    L = float(opts.get("slot_seconds", 360.0))
    if not L > 0:
        raise InputError(instance.name, "$.metadata.hadar.slot_seconds", f"must be > 0 (got {L})")

    def choice(key: str, allowed, default: str) -> str:
        value = opts.get(key, default)
        if value not in allowed:
            raise InputError(
                instance.name,
                f"$.metadata.hadar.{key}",
                f"one of {', '.join(allowed)}, not {value!r}",
            )
        return value

    progress = choice("progress", ("per-worker", "bottleneck"), "per-worker")
    jct = choice("jct", tuple(JCT_READINGS), "f-a+1")
    utility_name = choice("utility", UTILITY_NAMES, "effective-throughput")
    types = tuple(sorted({g.type for g in instance.gpus}))
    machines = tuple(s.id for s in instance.cluster.servers)
    cap = np.zeros((len(machines), len(types)), dtype=np.int64)
    for h, s in enumerate(instance.cluster.servers):
        for g in s.gpus:
            cap[h, types.index(g.type)] += 1
    thr = np.zeros((len(instance.jobs), len(types)))
    work, workers = [], []
    for j, job in enumerate(instance.jobs):
        for r, t in enumerate(types):
            if t not in job.throughput:
                raise InputError(
                    instance.name, f"$.jobs[{j}].throughput", f"no throughput for GPU type '{t}'"
                )
            thr[j, r] = job.throughput[t]
        if not job.epochs or not job.iterations_per_epoch:
            raise InputError(
                instance.name,
                f"$.jobs[{j}]",
                "Hadar needs epochs (E_j) and iterations_per_epoch (N_j)",
            )
        w = job.requested_workers or 1
        if w > cap.sum():
            raise InputError(
                instance.name,
                f"$.jobs[{j}].requested_workers",
                f"{w} GPUs > the cluster's {cap.sum()}",
            )
        work.append(job.epochs * job.iterations_per_epoch)
        workers.append(w)
    arrival = np.array([math.floor(j.arrival / L) + 1 for j in instance.jobs], dtype=np.int64)
    view = HadarView(
        tuple(j.id for j in instance.jobs),
        machines,
        types,
        cap,
        arrival,
        np.array(workers),
        np.array(work, dtype=float),
        thr,
        L,
        0,
        progress,
        utility_name,
        JCT_READINGS[jct],
    )
    T = opts.get("horizon_slots")
    if T is None:
        slowest = [
            math.ceil(
                view.work[j]
                / view.rate(
                    j, [int(np.argmin(np.where(thr[j] > 0, thr[j], np.inf)))], int(view.workers[j])
                )
            )
            for j in range(view.n_jobs)
        ]
        T = int(arrival.max()) + int(sum(slowest))
    view = HadarView(**{**view.__dict__, "horizon": int(T)})
    if view.jct_offset == 0:  # the literal JCT f - a: a finish in the arrival slot would be 0
        for j in range(view.n_jobs):
            if view.work[j] <= fastest_rate(view, j) * (1 + 1e-12):
                raise InputError(
                    instance.name,
                    "$.metadata.hadar.jct",
                    f"under 'f-a' job {view.job_ids[j]} could finish in its arrival slot "
                    "(JCT 0, an unbounded utility); use 'f-a+1'",
                )
    return view


Gang = tuple[tuple[int, int, int], ...]  # ((h, r, count), ...)


def cheapest_gangs(
    view: HadarView,
    j: int,
    k_t: np.ndarray,
    free: np.ndarray | None = None,
    exact_levels: bool = False,
) -> list[tuple[Gang, float, float]]:
    """For one slot with prices ``k_t[h, r]``: per throughput level of job j, the cheapest gang of
    W_j GPUs over the types at least that fast, as (gang, rate per slot, cost); dominated ones dropped.

    ``exact_levels``: per level, the cheapest gang whose slowest type is exactly that level (so
    its rate is exactly that level's), none dropped -- what a slot needs where running faster
    can hurt (a finish not allowed before some slot)."""
    need = int(view.workers[j])
    cap = view.capacity if free is None else free
    x = view.throughput[j]
    out: list[tuple[Gang, float, float]] = []
    for level in sorted({float(v) for v in x if v > 0}, reverse=True):
        cells = sorted(
            (
                (float(k_t[h, r]), h, r)
                for h in range(cap.shape[0])
                for r in range(cap.shape[1])
                if x[r] >= level and cap[h, r] > 0
            )
        )
        units = list(
            islice(((price, h, r) for price, h, r in cells for _ in range(int(cap[h, r]))), need)
        )
        if len(units) < need:
            continue
        if exact_levels and not any(x[r] == level for _, _, r in units):
            at_level = [(price, h, r) for price, h, r in cells if x[r] == level]
            if not at_level:
                continue
            units = units[:-1] + [
                at_level[0]
            ]  # the W-1 cheapest and the cheapest unit at the level
        counts: dict[tuple[int, int], int] = {}
        for _, h, r in units:
            counts[h, r] = counts.get((h, r), 0) + 1
        gang = tuple((h, r, n) for (h, r), n in counts.items())
        cost = float(sum(price for price, _, _ in units))
        rate = view.rate(j, sorted({r for _, r, _ in gang}), need)
        if exact_levels or not any(c <= cost and rt >= rate for _, rt, c in out):
            out.append((gang, rate, cost))
    return out


def fastest_rate(view: HadarView, j: int) -> float:
    """Iterations per slot of job j's fastest gang on the whole (empty) cluster."""
    return max(rate for _, rate, _ in cheapest_gangs(view, j, np.zeros(view.capacity.shape)))
