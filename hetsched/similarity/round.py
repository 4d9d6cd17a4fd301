"""One scheduling round of the AppSci'24 model-similarity policy (Sec. 4.2, Algorithm 2), and the
exact round it is compared with (``models/similarity_allocation.py``).

The instance is the round: the cluster's GPUs are free; the jobs wait in arrival order, each with
``model.name`` (its own row of Gavel's table: the truth, unknown to the scheduler) and
``requested_workers``; ``model.features`` (layers, parameters in millions, batch size) if given,
else the row's (:mod:`hetsched.similarity.reference`). ``metadata.similarity``:
``variant`` = ``gpu`` (choose the GPU type; the GPU count is the request), ``gpu_ngpu`` (type and
count), ``gpu_ngpu_bs`` (type, count and batch size among the closest reference's family), and
``unseen`` (default true: the job's own row is left out of the database, so the scheduler works
from the most similar *other* model, as for a new job). In ``gpu_ngpu_bs``, a job whose model was
measured at none of the closest reference's batch sizes keeps its own (its options are those of
``gpu_ngpu``): otherwise it could never run.

Options o = (type, GPUs, row). The scheduler ranks them by the closest reference's throughput
(Algorithm 2, line 6: descending; samples/s = iterations/s x batch size when batch sizes differ).
What a decision is worth is the job's *true* throughput of that option, in samples/s, over its
best true option that fits the cluster: a job gets 1 on its best option, 0 if it waits. The round's value is the sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.errors import InputError
from hetsched.core.reports import ValidationReport, Violation
from hetsched.instance.extensions import SIMILARITY_VARIANTS, SimilarityOptions
from hetsched.instance.model import Instance
from hetsched.similarity.reference import ReferenceDB, gavel_reference_db, parse_row, row_features

VARIANTS = SIMILARITY_VARIANTS


@dataclass(frozen=True)
class Option:
    gpu_type: str
    gpus: int
    row: str  # the table row the job runs as (its batch size)
    estimate: float  # samples/s of the closest reference (what the scheduler sees)
    value: float  # the job's true samples/s here over its best true option


@dataclass(frozen=True)
class RoundView:
    job_ids: tuple[str, ...]  # queue order
    free: dict[str, int]  # free GPUs per type
    options: tuple[tuple[Option, ...], ...]  # per job, ranked by estimate (Algorithm 2, line 6)
    reference: tuple[str, ...]  # the closest reference row of each job (Algorithm 1)
    similarity: tuple[float, ...]


def round_view(instance: Instance, db: ReferenceDB | None = None) -> RoundView:
    src = instance.name
    db = db or gavel_reference_db()
    opts = instance.extensions.similarity or SimilarityOptions()  # checked on construction
    variant, unseen = opts.variant, opts.unseen
    free: dict[str, int] = {}
    for g in instance.gpus:
        free[g.type] = free.get(g.type, 0) + 1
    jobs = sorted(range(len(instance.jobs)), key=lambda k: (instance.jobs[k].arrival, k))
    options, refs, sims = [], [], []
    for k in jobs:
        job = instance.jobs[k]
        if job.model is None or not job.model.name:
            raise InputError(
                src, f"$.jobs[{k}].model.name", "missing: the job's row of Gavel's table"
            )
        own = job.model.name
        truth_family, _ = parse_row(own)
        feats = job.model.features or {}
        vector = (
            (float(feats["layers"]), float(feats["parameters_m"]), float(feats["batch_size"]))
            if {"layers", "parameters_m", "batch_size"} <= set(feats)
            else row_features(own)
        )
        ref, sim = db.closest(vector, exclude=own if unseen else None)
        refs.append(ref.name)
        sims.append(sim)
        want = job.requested_workers or 1

        def candidates(batch_sizes: bool) -> list:
            rows = [r for r in db.jobs if r.family == ref.family] if batch_sizes else [ref]
            raw = []
            for r in rows:
                for (t, n), thr in r.throughput.items():
                    if t not in free or (variant == "gpu" and n != want):
                        continue
                    true_row = (
                        _same_family_row(db, truth_family, r.batch_size) if batch_sizes else own
                    )
                    true = db.get(true_row).throughput.get((t, n)) if true_row else None
                    if true is None:
                        continue  # the job itself was never measured there: not an option
                    raw.append((t, n, true_row, thr * r.batch_size, true * parse_row(true_row)[1]))
            return [x for x in raw if x[1] <= free[x[0]]]  # options that fit the cluster at all

        raw = candidates(variant == "gpu_ngpu_bs")
        if not raw and variant == "gpu_ngpu_bs":
            raw = candidates(
                False
            )  # none of the reference's batch sizes exists for this job: it keeps its own
        best = max((x[4] for x in raw), default=0.0)
        ranked = sorted(raw, key=lambda x: (-x[3], x[0], x[1], x[2]))
        options.append(tuple(Option(t, n, row, est, tv / best) for t, n, row, est, tv in ranked))
    return RoundView(
        tuple(instance.jobs[k].id for k in jobs), free, tuple(options), tuple(refs), tuple(sims)
    )


def _same_family_row(db: ReferenceDB, family: str, batch_size: int) -> str | None:
    for r in db.jobs:
        if r.family == family and r.batch_size == batch_size:
            return r.name
    return None


def greedy_round(view: RoundView) -> dict[str, Option]:
    """Algorithm 2: jobs in queue order; each takes its first ranked option that fits the free
    GPUs of that type (lines 7-13); stop when no GPU is free."""
    free = dict(view.free)
    out: dict[str, Option] = {}
    for jid, opts in zip(view.job_ids, view.options):
        if sum(free.values()) == 0:
            break
        for o in opts:
            if o.gpus <= free.get(o.gpu_type, 0):
                out[jid] = o
                free[o.gpu_type] -= o.gpus
                break
    return out


def check_round(instance: Instance, decision: dict[str, Option]) -> ValidationReport:
    """Independent check: known jobs, options the job has, free GPUs per type respected; the
    value (sum of normalized true throughputs) recomputed."""
    view = round_view(instance)
    by_job = dict(zip(view.job_ids, view.options))
    used: dict[str, int] = {}
    bad, value = [], 0.0
    for jid, o in decision.items():
        if jid not in by_job:
            bad.append(Violation("unknown_job", f"'{jid}' is not in the queue"))
            continue
        match = [
            x for x in by_job[jid] if (x.gpu_type, x.gpus, x.row) == (o.gpu_type, o.gpus, o.row)
        ]
        if not match:
            bad.append(
                Violation("bad_option", f"'{jid}' cannot run as {o.row} on {o.gpus} x {o.gpu_type}")
            )
            continue
        used[o.gpu_type] = used.get(o.gpu_type, 0) + o.gpus
        value += match[0].value
    for t, n in used.items():
        if n > view.free.get(t, 0):
            bad.append(Violation("capacity", f"{n} {t} GPUs used, {view.free.get(t, 0)} free"))
    return ValidationReport(not bad, value if not bad else None, {}, bad)


def decision_value(decision: dict[str, Option]) -> float:
    return float(np.sum([o.value for o in decision.values()])) if decision else 0.0
