"""The AppSci'24 evaluation's workload (Sec. 5) for the one gang simulator: jobs of Gavel's
table rows on a small K80/P100/V100 cluster, which may run resized (``metadata.gang.resize =
"count-batch"``), so that the model-similarity policy can choose each job's GPU type, GPU count
and batch size every round (``similarity:gpu_ngpu_bs``, :mod:`hetsched.sim.gang_policies.similarity`).
``hetsched similarity-sim`` is a shortcut for ``compare`` on it; ``simulate``/``compare`` take it
as the workload ``similarity-jobs[:MINUTES]``.

A job's work is its samples over the batch size of its row: iterations of its own row (the gang
model's unit, :mod:`hetsched.sim.gang_model`), with ``throughput`` the row's measured iterations/s
at its GPU count on each type.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.errors import InputError
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.similarity.reference import gavel_reference_db

MEMORY = {"k80": 12.0, "p100": 16.0, "v100": 16.0}  # GB per GPU type
DEFAULT_GPUS = {"k80": 4, "p100": 4, "v100": 4}


def similarity_workload(
    seed: int,
    n_jobs: int = 50,
    arrival_span_minutes: float = 0.0,
    gpus: dict[str, int] | None = None,
    median_minutes: float = 20.0,
) -> Instance:
    """Jobs of Gavel's table rows measured on every type at their GPU count (1 GPU 60%, 2 25%,
    4 15%, when measured); arrivals uniform over ``arrival_span_minutes`` (0: all at once, the
    paper's third scenario; 7 and 15 its others); work = a log-normal duration (median
    ``median_minutes``) on the requested GPUs of V100; memory 1-12 GB (the table has none)."""
    gpus = dict(gpus or DEFAULT_GPUS)
    unknown = sorted(set(gpus) - set(MEMORY))
    if unknown:
        raise InputError(
            "--cluster",
            unknown[0],
            f"no measured throughputs for this GPU type (known: {', '.join(MEMORY)})",
        )
    db = gavel_reference_db()
    rng = np.random.default_rng([seed, 13])
    rows = [r for r in db.jobs if all((t, 1) in r.throughput for t in gpus)]
    jobs = []
    arrivals = (
        np.sort(rng.uniform(0.0, arrival_span_minutes * 60.0, n_jobs))
        if arrival_span_minutes > 0
        else np.zeros(n_jobs)
    )
    for k in range(n_jobs):
        r = rows[int(rng.integers(len(rows)))]
        want = int(rng.choice([1, 2, 4], p=[0.6, 0.25, 0.15]))
        if not all((t, want) in r.throughput for t in gpus):
            want = 1
        minutes = float(rng.lognormal(np.log(median_minutes), 0.8))
        samples = minutes * 60.0 * r.throughput[("v100", want)] * r.batch_size
        jobs.append(
            Job(
                f"J{k}",
                float(arrivals[k]),
                1.0,
                1,
                want,
                {t: 1.0 for t in gpus},  # Hare's task times: not read by the gang model
                {t: 0.0 for t in gpus},
                requested_workers=want,
                epochs=samples / r.batch_size,
                iterations_per_epoch=1,
                throughput={t: r.throughput[(t, want)] for t in gpus},
                memory_gb=float(np.round(rng.uniform(1, 12) * 2) / 2),
                model=ModelInfo(name=r.name),
            )
        )
    span = f"{arrival_span_minutes:g}min" if arrival_span_minutes > 0 else "static"
    return Instance(
        f"similarity-{n_jobs}-{span}-s{seed}",
        cluster_by_type(gpus, {t: GpuType(t, memory_gb=MEMORY[t]) for t in gpus}),
        tuple(jobs),
        metadata={
            "gang": {"resize": "count-batch"},
            "generator": "similarity-jobs",
            "seed": seed,
            "arrival_span_minutes": arrival_span_minutes,
        },
    )


def cluster_by_type(counts: dict[str, int], types: dict[str, GpuType]) -> Cluster:
    """``counts[t]`` GPUs of each type t on one server per type (the similarity policy counts
    GPUs per type: Algorithm 2 and its rounds), with the types' data from ``types``."""
    servers = tuple(
        Server(t, tuple(Gpu(f"{t}{i}", t, t) for i in range(n)))
        for t, n in sorted(counts.items())
        if n > 0
    )
    return Cluster({t: types.get(t, GpuType(t)) for t in counts}, servers)
