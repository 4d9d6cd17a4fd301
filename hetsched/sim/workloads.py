"""Workloads for the simulator, as Hare-model instances (rounds of parallel tasks with per-type
T^c, T^s). A workload spec is one of:

* a path to an instance file (``instances/...json``);
* ``hare-table2``: Hare's Table 2 mix on V100/T4/K80/M60 (:func:`hetsched.instance.generators.hare_table2`);
* ``gavel-poisson``: Gavel's measured throughputs, Poisson arrivals, Philly's GPU-count split (20
  jobs/h, about 2.5 times what 3 x 20 GPUs can serve: the backlog grows without bound);
* ``gavel-poisson:U``: the same mix at load U of the cluster's fluid capacity (7.96 jobs/h on 3 x
  20 GPUs; :mod:`hetsched.sim.stable_load`); ``gavel-poisson:stable`` is U = 0.4 (3.18 jobs/h),
  where every policy's backlog stays bounded (:data:`STABLE_LOAD`);
* ``philly``: a busy window of the Philly trace (480 jobs, 3 types x 20 GPUs, as Hadar uses);
* ``philly-static``: the same jobs, all submitted at time 0 (Hadar's "static trace" setting);
* ``philly:VC`` / ``philly-static:VC``: the busiest window of another virtual cluster. The default
  VC 6214e9 is the trace's largest, and its busiest window has only 1-GPU jobs; 0e4a51 has 24%
  multi-GPU jobs, 103959 19%, 6c71a0 9%;
* ``harmony-jobs[:uniform|poisson]``: Harmony's evaluation jobs with its speed model
  (:mod:`hetsched.harmony.workload`): interference, parameter servers, CPU and bandwidth;
* ``similarity-jobs[:MINUTES]``: the AppSci'24 evaluation's jobs (:mod:`hetsched.similarity.workload`),
  arriving uniformly over MINUTES (default 0: all at once), which may run resized;
* ``gavel-trace:PATH``: one of Gavel's trace files; a bare name such as
  ``gavel-trace:physical_cluster_max_min_fairness`` is one shipped in ``data/gavel/traces/``.

Every job-level trace becomes Hare's model the same way (:func:`gavel_job`):
* the job's (model, scale factor) row of Gavel's table gives its throughput X^r (iterations/s of
  the whole job) on each type; W = the scale factor is the tasks per round (one per worker);
* its iterations are cut into at most ``max_rounds`` rounds of c iterations; a worker's task of
  a round trains for c / X^r on a type-r GPU (every worker spends the round's time), with no
  separate sync (Gavel's throughputs include it). A type the table has no throughput for gets
  a task time of ``NEVER``;
* the rounding of c changes a job's total work by less than one round (reported per workload).

Assumptions of the trace-based workloads are in their docstrings; the seed fixes everything random.
"""

from __future__ import annotations

import csv
import math
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import numpy as np

from hetsched.core.errors import InputError
from hetsched.core.resources import find_shipped, shipped
from hetsched.instance.gavel_table import GAVEL_COST, NEVER, ThroughputTable, load_throughputs
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server

PHILLY_FILE = ("data", "traces", "philly_pollux_jobs.csv")  # shipped (hetsched.core.resources)
TYPES = ("k80", "p100", "v100")
MAX_ROUNDS = 50


def cluster(
    per_type: int = 20, types: tuple[str, ...] = TYPES, gpus_per_server: int = 4
) -> Cluster:
    gpus = [(t, i) for t in types for i in range(per_type)]
    servers = tuple(
        Server(
            f"s{k}", tuple(Gpu(f"{t}-{i}", t, f"s{k}") for t, i in gpus[j : j + gpus_per_server])
        )
        for k, j in enumerate(range(0, len(gpus), gpus_per_server))
    )
    return Cluster({t: GpuType(t, cost_per_hour=GAVEL_COST.get(t)) for t in types}, servers)


def gavel_job(
    job_id: str,
    arrival: float,
    model: str,
    scale: int,
    iterations: float,
    table: ThroughputTable,
    types: tuple[str, ...] = TYPES,
    max_rounds: int = MAX_ROUNDS,
) -> Job:
    """A Gavel (model, scale) job of ``iterations`` iterations as Hare rounds (module docstring);
    ``iterations`` is rounded to a whole number (at least 1), as the instance format requires,
    so that a generated workload saves and loads back unchanged."""
    iterations = max(1, round(iterations))
    thr = {t: table.isolated[t].get((model, scale), 0.0) for t in types}
    rounds = max(1, min(max_rounds, int(math.ceil(iterations))))
    chunk = iterations / rounds
    return Job(
        id=job_id,
        arrival=round(arrival, 3),
        weight=1.0,
        rounds=rounds,
        tasks_per_round=scale,
        train_time={t: round(chunk / x, 3) if x > 0 else NEVER for t, x in thr.items()},
        sync_time={t: 0.0 for t in types},
        requested_workers=scale,
        epochs=1.0,
        iterations_per_epoch=iterations,
        throughput=thr,
        model=ModelInfo(name=model),
    )


def _keys(table: ThroughputTable, types=TYPES) -> dict[int, list[str]]:
    """Models measured on every type, by scale factor."""
    out: dict[int, list[str]] = {}
    for model, scale in sorted(table.isolated[types[0]]):
        if all(table.isolated[t].get((model, scale), 0) > 0 for t in types):
            out.setdefault(scale, []).append(model)
    return out


def philly_rows(path: Path | None = None) -> list[tuple[float, float, int, str]]:
    """(submit time s, duration s, GPUs, VC) with Pollux's filter: duration >= 60 s, < 1000 GPU-hours."""
    path = path or shipped(*PHILLY_FILE)
    return list(_philly_rows(path, path.stat().st_mtime_ns))


@lru_cache(maxsize=4)
def _philly_rows(path: Path, _mtime_ns: int) -> tuple[tuple[float, float, int, str], ...]:
    """The parsed trace, once per process and file version (82,000 rows: about 1 s to parse)."""
    rows = []
    with path.open() as f:
        for i, r in enumerate(csv.DictReader(f)):
            try:  # "%Y-%m-%d %H:%M:%S", read as datetime.strptime would, 10x faster
                t = datetime.fromisoformat(r["timestamp"]).timestamp()
                d, g = float(r["duration"]), int(r["num_gpus"])
            except (KeyError, ValueError, TypeError) as exc:
                raise InputError(path.name, f"row {i + 2}", f"bad field: {exc}") from None
            if d >= 60 and d * g < 1000 * 3600:
                rows.append((t, d, g, r["cluster"]))
    rows.sort()
    return tuple(rows)


def philly_split(rows) -> dict[int, float]:
    """Share of jobs by GPU count, counts mapped to Gavel's scale factors 1, 2, 4, 8 (more -> 8)."""
    counts: dict[int, int] = {}
    for _, _, g, _ in rows:
        s = min(8, 1 << max(0, (g - 1).bit_length())) if g > 1 else 1
        counts[s] = counts.get(s, 0) + 1
    total = sum(counts.values())
    return {s: c / total for s, c in sorted(counts.items())}


def philly_window(
    seed: int = 0,
    n_jobs: int = 480,
    per_type: int = 20,
    vc: str = "6214e9",
    table: ThroughputTable | None = None,
    max_rounds: int = MAX_ROUNDS,
    static: bool = False,
) -> Instance:
    """The ``n_jobs`` consecutive submissions of VC ``vc`` with the shortest span (the busiest
    window), on ``per_type`` GPUs of each of K80, P100, V100; ``static``: all submitted at 0.

    Assumptions (the trace has no GPU types or models): a job's GPU count becomes Gavel's scale
    factor (1, 2, 4, 8; more -> 8); its model is drawn (seeded) among the models Gavel measured at
    that scale on all three types; its trace duration is its runtime on P100s (Philly's GPUs were
    mostly P100/P40-class), so iterations = duration x X^p100."""
    table = table or load_throughputs()
    rows = [r for r in philly_rows() if r[3] == vc]
    if len(rows) < n_jobs:
        raise InputError(PHILLY_FILE[-1], "$", f"VC {vc} has {len(rows)} jobs < {n_jobs}")
    spans = [rows[i + n_jobs - 1][0] - rows[i][0] for i in range(len(rows) - n_jobs + 1)]
    first = int(np.argmin(spans))
    window = rows[first : first + n_jobs]
    rng = np.random.default_rng([seed, 6])
    keys = _keys(table)
    jobs = []
    for k, (t, d, g, _) in enumerate(window):
        scale = min(8, 1 << max(0, (g - 1).bit_length())) if g > 1 else 1
        model = keys[scale][int(rng.integers(len(keys[scale])))]
        iterations = d * table.isolated["p100"][(model, scale)]
        jobs.append(
            gavel_job(
                f"J{k}",
                0.0 if static else t - window[0][0],
                model,
                scale,
                iterations,
                table,
                max_rounds=max_rounds,
            )
        )
    return Instance(
        f"philly-{vc}-{n_jobs}-s{seed}{'-static' if static else ''}",
        cluster(per_type),
        tuple(jobs),
        description=f"{'All at time 0: ' if static else ''}Philly VC {vc}, the busiest {n_jobs}-job window (starting "
        f"{datetime.fromtimestamp(window[0][0]).isoformat()}); see hetsched.sim.workloads",
        metadata={"generator": "hetsched.sim.workloads.philly_window", "seed": seed},
    )


#: ``gavel-poisson:stable``: the load at which every simulated policy's backlog stays bounded
#: (jobs in system, mean, at 10,000 and 30,000 jobs: tiresias 38.5 and 35.3, yarn-cs 32.5 and
#: 32.6, hlas-p 33.9 and 34.3). The fluid capacity assumes the best split of each job class over
#: the types; policies that place gangs blind to speed use far more GPU time per job: at 0.6
#: Tiresias' backlog grows (705 -> 1,941 jobs) and at 0.7, where fifo keeps the GPUs 81% busy,
#: Tiresias is 97% busy and grows 1,145 -> 3,572. At 0.4 Tiresias is 74% busy, fifo 32%.
STABLE_LOAD = 0.4
#: a gavel-poisson job's duration on a V100, log-uniform between these (seconds; our assumption)
V100_SECONDS = (1800.0, 72000.0)


def gavel_poisson(
    seed: int = 0,
    n_jobs: int = 480,
    rate_per_hour: float = 20.0,
    per_type: int = 20,
    table: ThroughputTable | None = None,
    max_rounds: int = MAX_ROUNDS,
    load: float | None = None,
) -> Instance:
    """Gavel-style synthetic workload: Poisson arrivals (``rate_per_hour``), the scale factor drawn
    with Philly's split (:func:`philly_split` of the whole filtered trace), the model uniform among
    those measured at that scale on all types, the duration on a V100 log-uniform between 30 min and
    20 h (our assumption; Gavel's own generator is not shipped here). With ``load`` U, the rate is
    U times the cluster's fluid capacity for this mix (:mod:`hetsched.sim.stable_load`; 7.96
    jobs/h on 3 x 20 GPUs), so that U < 1 keeps the backlog bounded; the default 20 jobs/h is
    about 2.5 times that capacity."""
    table = table or load_throughputs()
    keys, scales, probs = mix = _mix(table)
    if load is not None:
        rate_per_hour = load * capacity_per_hour(per_type, table, mix)
    rng = np.random.default_rng([seed, 7])
    arrivals = np.concatenate(
        ([0.0], np.cumsum(rng.exponential(3600.0 / rate_per_hour, n_jobs - 1)))
    )
    low, high = V100_SECONDS
    jobs = []
    for k in range(n_jobs):
        scale = int(rng.choice(scales, p=probs))
        model = keys[scale][int(rng.integers(len(keys[scale])))]
        seconds = float(np.exp(rng.uniform(np.log(low), np.log(high))))
        jobs.append(
            gavel_job(
                f"J{k}",
                float(arrivals[k]),
                model,
                scale,
                seconds * table.isolated["v100"][(model, scale)],
                table,
                max_rounds=max_rounds,
            )
        )
    tag = "" if load is None else f"-load{load:g}"
    return Instance(
        f"gavel-poisson-{n_jobs}{tag}-s{seed}",
        cluster(per_type),
        tuple(jobs),
        description=f"{n_jobs} jobs, Gavel throughputs, Poisson arrivals {rate_per_hour:.6g}/h"
        + ("" if load is None else f" (load {load:g} of the fluid capacity)")
        + ", Philly split",
        metadata={"generator": "hetsched.sim.workloads.gavel_poisson", "seed": seed},
    )


def _mix(table: ThroughputTable) -> tuple[dict[int, list[str]], list[int], np.ndarray]:
    """``gavel-poisson``'s job mix: the models measured on every type by scale factor, the scale
    factors of Philly's split that have some, and their probabilities."""
    split = philly_split(philly_rows())
    keys = _keys(table)
    scales = [s for s in split if s in keys]
    probs = np.array([split[s] for s in scales]) / sum(split[s] for s in scales)
    return keys, scales, probs


def capacity_per_hour(
    per_type: int = 20, table: ThroughputTable | None = None, mix: tuple | None = None
) -> float:
    """The fluid capacity, in jobs per hour, of ``per_type`` GPUs of each type for
    ``gavel-poisson``'s job mix (``mix``: :func:`_mix` of ``table``, if already made;
    :func:`hetsched.sim.stable_load.saturation_rate`)."""
    from hetsched.sim.stable_load import mean_log_uniform, saturation_rate

    table = table or load_throughputs()
    keys, scales, probs = mix or _mix(table)
    classes = [
        (float(p) / len(keys[s]), s, {t: table.isolated[t][(m, s)] for t in TYPES})
        for s, p in zip(scales, probs)
        for m in keys[s]
    ]
    rate = saturation_rate(classes, {t: per_type for t in TYPES}, mean_log_uniform(*V100_SECONDS))
    return 3600.0 * rate


def coarsen(instance: Instance, max_rounds: int = MAX_ROUNDS) -> Instance:
    """Merge rounds so that no job has more than ``max_rounds`` (task times scaled, total work kept)."""
    import dataclasses

    jobs = []
    for j in instance.jobs:
        if j.rounds <= max_rounds:
            jobs.append(j)
            continue
        f = j.rounds / max_rounds
        jobs.append(
            dataclasses.replace(
                j,
                rounds=max_rounds,
                train_time={
                    t: round(v * f, 3) if v < NEVER else v for t, v in j.train_time.items()
                },
                sync_time={t: round(v * f, 3) for t, v in j.sync_time.items()},
                train_time_per_gpu={g: round(v * f, 3) for g, v in j.train_time_per_gpu.items()},
                sync_time_per_gpu={g: round(v * f, 3) for g, v in j.sync_time_per_gpu.items()},
            )
        )
    return dataclasses.replace(instance, jobs=tuple(jobs))


def load_workload(spec: str, seed: int = 0, n_jobs: int | None = None) -> Instance:
    """A workload by spec (module docstring)."""
    from hetsched.instance.generators import hare_table2
    from hetsched.instance.io import load_instance

    sized = {} if n_jobs is None else {"n_jobs": n_jobs}
    if spec == "hare-table2":
        return hare_table2(seed, **sized)
    if spec == "gavel-poisson":
        return gavel_poisson(seed, **sized)
    base, _, vc = spec.partition(":")
    if base == "gavel-poisson":
        return gavel_poisson(seed, **sized, load=STABLE_LOAD if vc == "stable" else _load(spec, vc))
    if base in ("philly", "philly-static"):
        return philly_window(
            seed, static=base == "philly-static", **({"vc": vc} if vc else {}), **sized
        )
    if base == "harmony-jobs":
        from hetsched.harmony.workload import ARRIVALS, harmony_workload

        if vc and vc not in ARRIVALS:
            raise InputError(spec, "ARRIVALS", f"one of {', '.join(ARRIVALS)}, not {vc!r}")
        return harmony_workload(seed, **sized, arrivals=vc or "uniform")
    if base == "similarity-jobs":
        from hetsched.similarity.workload import similarity_workload

        return similarity_workload(seed, **sized, arrival_span_minutes=_minutes(spec, vc))
    if spec.startswith("gavel-trace:"):
        from hetsched.instance.gavel_table import load_trace

        path = spec.split(":", 1)[1]
        table = load_throughputs()
        return coarsen(load_trace(path, table, {t: 20 for t in TYPES}))
    if (
        Path(spec).suffix == ".json"
        or Path(spec).is_file()
        or find_shipped(spec, "instances", ".json")
    ):
        return load_instance(spec)  # a file, or a shipped instance by name
    raise InputError(
        spec,
        "$",
        "unknown workload: an instance file or shipped instance name, hare-table2, gavel-poisson[:LOAD], "
        "philly[:VC], philly-static[:VC], harmony-jobs[:uniform|poisson], "
        "similarity-jobs[:MINUTES] or gavel-trace:PATH",
    )


def _load(spec: str, text: str) -> float:
    """U of ``gavel-poisson:U``: a number in (0, 1] (a load past 1 is the default's overload)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise InputError(
            spec, "LOAD", f"a load in (0, 1] or 'stable', e.g. gavel-poisson:0.8 (got {text!r})"
        )
    return value


def _minutes(spec: str, text: str) -> float:
    """The arrival span of ``similarity-jobs:MINUTES`` (none: every job at time 0)."""
    try:
        value = float(text) if text else 0.0
    except ValueError:
        value = -1.0
    if not (0.0 <= value < float("inf")):
        raise InputError(spec, "MINUTES", f"must be a number of minutes >= 0 (got {text!r})")
    return value
