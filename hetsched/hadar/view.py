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

import numpy as np

from hetsched.core.errors import InputError
from hetsched.hadar.arrays import Gang, HadarView, cheapest_gangs, fastest_rate
from hetsched.instance.extensions import JCT_READINGS, UTILITY_NAMES, HadarOptions
from hetsched.instance.model import Instance, Job, throughput_row

# the utilities U_j an instance may name (``metadata.hadar.utility``; formulas in
# hetsched.hadar.utility) and the readings of the JCT of a job finishing in slot f_j, with
# their offsets, are declared with the instance's Hadar extension
__all__ = [
    "JCT_READINGS",
    "UTILITY_NAMES",
    "Gang",
    "HadarView",
    "cheapest_gangs",
    "fastest_rate",
    "hadar_view",
]


def hadar_view(instance: Instance) -> HadarView:
    opts = instance.extensions.hadar or HadarOptions()  # checked when the instance was made
    L, progress, jct, utility_name = opts.slot_seconds, opts.progress, opts.jct, opts.utility
    types = tuple(sorted({g.type for g in instance.gpus}))
    machines = tuple(s.id for s in instance.cluster.servers)
    cap = np.zeros((len(machines), len(types)), dtype=np.int64)
    for h, s in enumerate(instance.cluster.servers):
        for g in s.gpus:
            cap[h, types.index(g.type)] += 1
    thr = np.zeros((len(instance.jobs), len(types)))
    work, workers = [], []
    for j, job in enumerate(instance.jobs):
        thr[j] = throughput_row(instance, j, types)
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
    T = opts.horizon_slots
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


def hadar_job(
    job_id: str,
    arrival: float,
    types: list[str],
    workers: int,
    epochs: float,
    throughput: dict[str, float],
) -> Job:
    """A job of Hadar's model alone (E_j epochs of one iteration, W_j workers, X_j^r per type),
    with the placeholder round (one task, 1 s on every type of ``types``) that a Hare job needs."""
    return Job(
        job_id,
        arrival,
        1.0,
        1,
        1,
        {t: 1.0 for t in types},
        {t: 0.0 for t in types},
        requested_workers=workers,
        epochs=epochs,
        iterations_per_epoch=1,
        throughput=throughput,
    )
