"""Job packing in one scheduling round (the model-similarity policy's Algorithm 3, Sec. 4.3 of
the AppSci'24 paper): jobs already scheduled *alone on one GPU* may each take one job from the
queue onto the same GPU, if both fit in its memory; at most two jobs share a GPU.

The instance carries the round: ``metadata.packing.scheduled`` maps a job id to the GPU it runs
on alone; every other job is queued. Throughputs are Gavel's measured ones (``simulation_
throughputs.json``): a job is the table row ``(model.name, 1)``; the pair row gives both jobs'
co-located throughputs (a, b) on that GPU type. GPU memory is the type's ``memory_gb``, a job's
its ``memory_gb`` (both required). A pair Gavel lists as (0, 0) cannot run together.

Value of a packing (what Algorithm 3 and the exact model both maximize): Gavel's normalized
throughput, each job's throughput over its isolated throughput on that GPU, summed over every
job that runs; packing q onto s's GPU changes the sum by
    w(s, q) = a / T_s + b / T_q - 1      (s drops from 1 to a / T_s, q gains b / T_q).
The value of the round is |scheduled| + sum of w over the chosen pairs.

``metadata.packing.metric`` chooses the reading of "throughput" (the paper does not normalize):
``"normalized"`` (default, as above) or ``"raw"``, iterations/s summed over the jobs (a model's
iterations are not comparable to another's, but that is the literal sum): w(s, q) = a + b - T_s,
the round's value sum_s T_s + sum w, and Algorithm 3's "keep sj fast" compares a.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from hetsched.core.errors import InputError, expect_format
from hetsched.instance.extensions import PACKING_METRICS
from hetsched.instance.model import Instance

FORMAT = "hetsched.similarity.packing/1"


@lru_cache(maxsize=4)
def _table(path: str | None):
    from hetsched.instance.gavel_table import load_throughputs

    return load_throughputs(path)


@dataclass(frozen=True)
class PackingView:
    """Solo jobs S (with their GPU and its type), queued jobs Q, and the pair values w(s, q)."""

    job_ids: tuple[str, ...]
    solo: tuple[int, ...]  # job indices scheduled alone, in scheduling order
    solo_gpu: tuple[str, ...]  # their GPUs
    queue: tuple[int, ...]  # queued job indices, in arrival order
    gain: np.ndarray  # w[s_pos, q_pos]; NaN where the pair cannot share (memory, no measurement)
    own: (
        np.ndarray
    )  # a / T_s: the solo job's normalized throughput when packed with q (NaN likewise)
    base: float | None = None  # the round's value without pairs (None: |solo|, normalized)

    @property
    def unpacked(self) -> float:
        """The round's value with no pair: |scheduled| (normalized) or sum_s T_s (raw)."""
        return float(len(self.solo)) if self.base is None else self.base


#: the readings of the value of a packing (module doc)
METRICS = PACKING_METRICS


def packing_view(instance: Instance, throughputs: str | None = None) -> PackingView:
    """Read the round from the instance; errors name the field."""
    src = instance.name
    meta = instance.extensions.packing  # its ids were checked when the instance was made
    if meta is None:
        raise InputError(
            src, "$.metadata.packing.scheduled", "missing: a map job id -> the GPU it runs on alone"
        )
    table = _table(throughputs)
    gpus = {g.id: g for g in instance.gpus}
    index = {j.id: k for k, j in enumerate(instance.jobs)}
    solo = [index[jid] for jid in meta.scheduled]
    solo_gpu = list(meta.scheduled.values())
    queue = [k for k, j in enumerate(instance.jobs) if j.id not in meta.scheduled]
    raw = meta.metric == "raw"

    def row(k: int) -> tuple[str, int]:
        job = instance.jobs[k]
        if job.model is None or not job.model.name:
            raise InputError(src, f"$.jobs[{k}].model.name", "missing: the row of Gavel's table")
        if job.memory_gb is None:
            raise InputError(src, f"$.jobs[{k}].memory_gb", "missing: needed to check GPU memory")
        return job.model.name, 1

    gain = np.full((len(solo), len(queue)), np.nan)
    own = np.full((len(solo), len(queue)), np.nan)
    base = 0.0
    for a, s in enumerate(solo):
        gpu = gpus[solo_gpu[a]]
        cap = instance.cluster.gpu_types[gpu.type].memory_gb
        if cap is None:
            raise InputError(
                src,
                f"$.cluster.gpu_types.{gpu.type}.memory_gb",
                "missing: needed to check GPU memory",
            )
        rs = row(s)
        iso = table.isolated.get(gpu.type, {})
        if rs not in iso:
            raise InputError(
                src, f"$.jobs[{s}].model.name", f"no throughput for {rs} on {gpu.type}"
            )
        base += iso[rs]
        for b, q in enumerate(queue):
            rq = row(q)
            pair = table.pairs.get(gpu.type, {}).get(rs, {}).get(rq)
            if (
                pair is None or rq not in iso or min(pair) <= 0
            ):  # Gavel writes [0, 0] for pairs that cannot run together
                continue
            if instance.jobs[s].memory_gb + instance.jobs[q].memory_gb > cap + 1e-9:
                continue
            if raw:
                own[a, b] = pair[0]
                gain[a, b] = pair[0] + pair[1] - iso[rs]
            else:
                own[a, b] = pair[0] / iso[rs]
                gain[a, b] = pair[0] / iso[rs] + pair[1] / iso[rq] - 1.0
    return PackingView(
        tuple(j.id for j in instance.jobs),
        tuple(solo),
        tuple(solo_gpu),
        tuple(queue),
        gain,
        own,
        base if raw else None,
    )


@dataclass(frozen=True)
class Packing:
    """Chosen pairs (scheduled job id, queued job id)."""

    pairs: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict:
        return {"format": FORMAT, "pairs": [list(p) for p in self.pairs]}


def packing_from_dict(d: Any, source: str = "<packing>") -> Packing:
    d = expect_format(d, FORMAT, source)
    pairs = d.get("pairs")
    if not isinstance(pairs, list):
        raise InputError(source, "$.pairs", "missing: a list of [scheduled job id, queued job id]")
    for k, p in enumerate(pairs):
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)):
            raise InputError(
                source, f"$.pairs[{k}]", f"must be [scheduled job id, queued job id] (got {p!r})"
            )
    return Packing(tuple((a, b) for a, b in pairs))
