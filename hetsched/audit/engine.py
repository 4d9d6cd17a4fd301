"""The audit loop shared by every claim: random trials, then a guided search that keeps
mutating the worst instance found so far; every trial is appended to a JSON-lines log as it
ends, and a rerun with the same arguments resumes from that log.

A claim says ``measured <= bound`` on every instance. Where the paper leaves a quantity open, the
claim names its **readings** (``Claim.readings``: name -> the values, the project's default
first); an audit runs under one reading (:func:`apply_reading` puts it into every instance, whose
``metadata.audit.reading`` then records it), so a verdict says which reading it is about. Each trial evaluates it exactly
(``Evaluation.ratio`` and ``bound``); a trial whose exact reference could not be proven is
recorded as ``skipped`` and never counted as evidence either way. A claim may also check
named intermediate inequalities (a lemma's slack), reported as ratios LHS/RHS: > 1 violates.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hetsched.core.errors import InputError
from hetsched.core.executors import WorkerPool
from hetsched.core.jsonio import save_json
from hetsched.core.runstore import RunStore
from hetsched.instance.io import dump_instance, instance_to_dict, parse_instance
from hetsched.instance.model import Instance

TOL = 1e-9  # relative tolerance on ratios of validated objectives before a finding counts as a violation
CHECK_TOL = (
    1e-6  # on intermediate inequalities, which read a MILP solution (feasibility tolerance ~1e-7)
)


@dataclass
class Evaluation:
    ratio: float | None  # measured / reference; None when the reference is not proven (skipped)
    bound: float  # the claimed bound on the ratio for this instance
    checks: dict[str, float] = field(default_factory=dict)  # intermediate inequalities, LHS/RHS
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    trials: int
    max_tasks: int
    time_limit: float  # per exact solve
    random_fraction: float = 0.5  # share of trials drawn at random before the guided search
    min_tasks: int = 0  # a profile of large instances keeps its samples and mutations above this


@dataclass(frozen=True)
class Claim:
    name: str
    statement: str
    sample: Callable[[np.random.Generator, Profile], Instance]
    mutate: Callable[[Instance, np.random.Generator, Profile], Instance]
    evaluate: Callable[[Instance, Profile], Evaluation]
    checks: tuple[str, ...] = ()  # names of the intermediate inequalities, for the report
    profiles: dict[str, Profile] = field(default_factory=dict)
    reductions: Callable[[Instance], list[Instance]] | None = None  # smaller neighbours, for shrink
    size: Callable[[Instance], tuple] | None = None  # what "smaller" means, for shrink
    # name -> its values, the project's default first; read(instance, reading) sets them
    readings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    read: Callable[[Instance, dict[str, str]], Instance] | None = None


def parse_reading(claim: Claim, items: list[str] | None) -> dict[str, str]:
    """``["jct=f-a", "horizon=run-on"]`` -> the claim's full reading (defaults for the rest);
    an unknown name or value is an InputError naming it."""
    reading = {k: v[0] for k, v in claim.readings.items()}
    for item in items or []:
        for part in filter(None, item.split(",")):
            key, _, value = part.partition("=")
            if key not in claim.readings:
                known = ", ".join(claim.readings) or "none"
                raise InputError(
                    "audit", "--reading", f"{claim.name} has no reading {key!r} (it has: {known})"
                )
            if value not in claim.readings[key]:
                raise InputError(
                    "audit",
                    f"--reading {key}",
                    f"one of {', '.join(claim.readings[key])}, not {value!r}",
                )
            reading[key] = value
    return reading


def reading_label(claim: Claim, reading: dict[str, str]) -> str:
    """``jct=f-a,horizon=run-on``: the values that differ from the defaults ('' if none)."""
    return ",".join(
        f"{k}={v}" for k, v in reading.items() if claim.readings and v != claim.readings[k][0]
    )


def apply_reading(claim: Claim, inst: Instance, reading: dict[str, str]) -> Instance:
    """The instance under ``reading`` (``claim.read``), recorded in ``metadata.audit.reading``."""
    if not claim.readings:
        return inst
    out = claim.read(inst, reading) if claim.read else inst
    meta = dict(out.metadata or {})
    meta["audit"] = {**dict(meta.get("audit", {})), "reading": dict(reading)}
    return replace(out, metadata=meta)


def reading_of(inst: Instance, name: str, default: str) -> str:
    """The value of reading ``name`` an instance was audited under (``default`` if none)."""
    return str(((inst.metadata or {}).get("audit", {}).get("reading", {})).get(name, default))


def shrink(
    claim: Claim,
    instance: Instance,
    prof: Profile,
    violated: Callable[[Evaluation], bool] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Instance, Evaluation]:
    """Greedy delta debugging: keep taking the first reduction (claim.reductions) that still
    violates the claim, until none does. Returns a locally minimal violating instance."""
    if claim.reductions is None or claim.size is None:
        raise ValueError(f"claim {claim.name} has no reductions")
    violated = violated or (lambda ev: _score(ev) > 1 + TOL)
    ev = claim.evaluate(instance, prof)
    if not violated(ev):
        raise ValueError("the instance does not violate the claim")
    improved = True
    while improved:
        improved = False
        for smaller in sorted(claim.reductions(instance), key=claim.size):
            if claim.size(smaller) >= claim.size(instance):
                continue
            cand = claim.evaluate(smaller, prof)
            if violated(cand):
                instance, ev, improved = smaller, cand, True
                if progress:
                    checks = ", ".join(f"{k} {v:.4g}" for k, v in ev.checks.items())
                    progress(
                        f"shrunk to {claim.size(instance)}: ratio {ev.ratio:.4g} (bound {ev.bound:.4g})"
                        + (f"; checks (LHS/RHS) {checks}" if checks else "")
                    )
                break
    return instance, ev


@dataclass
class Worst:
    value: float = -math.inf
    trial: int | None = None
    instance: dict | None = None
    bound: float | None = None


def _score(ev: Evaluation) -> float:
    """How close the trial comes to violating the claim (> 1 violates)."""
    return ev.ratio / ev.bound if ev.ratio is not None and ev.bound > 0 else -math.inf


def run_audit(
    claim: Claim,
    trials: int | None = None,
    seed: int = 0,
    profile: str = "ci",
    out_dir: str | Path = "audit-results",
    progress: Callable[[str], None] | None = None,
    reading: dict[str, str] | None = None,
    executor: str = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    batch: int = 1,
) -> dict:
    """Run (or resume) ``trials`` trials of ``claim`` under ``reading`` (:func:`parse_reading`;
    None: the defaults); returns the report (also written as JSON).

    ``executor``: ``serial`` (in this process), or ``local`` / ``dask`` as in
    :mod:`hetsched.core.executors`. The guided search mutates the worst instance found before each
    ``batch`` of trials (1: before every trial); the log, and so the result, depends on the seed
    and ``batch`` only, never on the executor or the number of workers."""
    if batch < 1:
        raise InputError("audit", "--batch", f"must be >= 1 (got {batch})")
    prof = claim.profiles[profile]
    n_trials = prof.trials if trials is None else trials
    reading = parse_reading(claim, None) if reading is None else reading
    label = reading_label(claim, reading)
    out = Path(out_dir) / f"{claim.name}-{profile}-s{seed}{'-' + label if label else ''}"
    out.mkdir(parents=True, exist_ok=True)
    # the directory names claim, profile, seed and reading; the trial count (which sets where
    # the random trials end and the guided ones begin) and the batch change the log too, so a
    # store made with others is refused, never mixed: a rerun with the same ones resumes
    log = RunStore(out / "trials.jsonl", ("trial",), settings={"trials": n_trials, "batch": batch})
    records = list(log.rows())
    worst, worst_checks = Worst(), {c: Worst() for c in claim.checks}
    n_random = int(round(n_trials * prof.random_fraction))

    def absorb(rec: dict) -> None:
        if rec["ratio"] is None:
            return
        ev = Evaluation(rec["ratio"], rec["bound"])
        if _score(ev) > (worst.value if worst.trial is not None else -math.inf):
            worst.value, worst.trial, worst.instance, worst.bound = (
                _score(ev),
                rec["trial"],
                rec["instance"],
                rec["bound"],
            )
        for c, v in rec["checks"].items():
            w = worst_checks.setdefault(c, Worst())
            if v > w.value:
                w.value, w.trial, w.instance = v, rec["trial"], rec["instance"]

    for rec in records[:n_trials]:  # a store holding more trials than asked: the first n_trials
        absorb(rec)
    evaluate = partial(_evaluate_trial, claim, prof)
    pool = WorkerPool(executor, workers, scheduler) if executor != "serial" else None
    tag = f"{claim.name}-{profile}-s{seed}-{label or 'default'}"
    with log.writer(), pool or nullcontext():
        t = len(records)
        while t < n_trials:
            # random trials do not depend on each other: one chunk; guided ones mutate the
            # worst instance as of their batch's start (batch 1: the worst so far)
            if t < n_random:
                end = min(n_random, n_trials, t + max(batch, 4 * (workers or 2)))
            else:
                end = min(n_trials, t + batch)
            items = []
            for k in range(t, end):
                rng = np.random.default_rng([seed, k])
                if k < n_random or worst.instance is None:
                    inst, origin = claim.sample(rng, prof), "random"
                else:
                    parent = parse_instance(worst.instance, source=f"trial {worst.trial}")
                    inst, origin = (
                        claim.mutate(parent, rng, prof),
                        f"mutation of trial {worst.trial}",
                    )
                inst = replace(
                    apply_reading(claim, inst, reading),
                    name=f"{claim.name}-s{seed}-t{k}",
                    description=f"audit {claim.name}, seed {seed}, trial {k} ({origin})",
                )
                items.append((k, origin, instance_to_dict(inst)))
            if pool is None:
                done_now = [evaluate(item) for item in items]
            else:
                done_now = list(
                    pool.map(evaluate, items, key=lambda item: f"hetsched-audit-{tag}-t{item[0]}")
                )
            for rec in sorted(done_now, key=lambda r: r["trial"]):  # the log stays in trial order
                log.add(rec)
                records.append(rec)
                absorb(rec)
                if progress:
                    r = (
                        "skipped"
                        if rec["ratio"] is None
                        else f"ratio {rec['ratio']:.4f} (bound {rec['bound']:.4f})"
                    )
                    progress(f"trial {rec['trial'] + 1}/{n_trials} [{rec['origin']}]: {r}")
            t = end

    done = [r for r in records[:n_trials] if r["ratio"] is not None]
    violations = sum(1 for r in done if r["ratio"] > r["bound"] * (1 + TOL))
    report: dict[str, Any] = {
        "claim": claim.name,
        "statement": claim.statement,
        "profile": profile,
        "reading": reading,
        "seed": seed,
        "trials": n_trials,
        "evaluated": len(done),
        "skipped": min(len(records), n_trials) - len(done),
        "worst_ratio": None,
        "bound_at_worst": None,
        "violations": violations,
        "worst_instance": None,
        "checks": {},
        "log": str(log.path),
    }
    if worst.instance is not None:
        path = out / "worst.json"
        wi = parse_instance(worst.instance, source="worst")
        dump_instance(wi, path)
        best = next(r for r in records if r["trial"] == worst.trial)
        report.update(
            worst_ratio=best["ratio"],
            bound_at_worst=best["bound"],
            worst_instance=str(path),
            worst_trial=worst.trial,
            worst_details=best["details"],
        )
    for c, w in worst_checks.items():
        entry: dict[str, Any] = {
            "worst_lhs_over_rhs": None if w.trial is None else w.value,
            "violations": sum(1 for r in done if r["checks"].get(c, -math.inf) > 1 + CHECK_TOL),
        }
        if w.instance is not None:
            path = out / f"worst-{c}.json"
            dump_instance(parse_instance(w.instance, source=c), path)
            entry.update(instance=str(path), trial=w.trial)
        report["checks"][c] = entry
    save_json(out / "report.json", report, indent=1)
    return report


def _evaluate_trial(claim: Claim, prof: Profile, item: tuple[int, str, dict]) -> dict:
    """One trial's log record (run in a worker: a module-level function of picklable data)."""
    t, origin, data = item
    ev = claim.evaluate(parse_instance(data, source=data.get("name", "trial")), prof)
    return {
        "trial": t,
        "origin": origin,
        "ratio": ev.ratio,
        "bound": ev.bound,
        "checks": ev.checks,
        "details": ev.details,
        "instance": data,
    }


def drop_gpu(d: dict, victim: str) -> None:
    """Remove GPU ``victim`` from an instance dict, and any GPU type no GPU has any more."""
    for s in d["cluster"]["servers"]:
        s["gpus"] = [g for g in s["gpus"] if g["id"] != victim]
    d["cluster"]["servers"] = [s for s in d["cluster"]["servers"] if s["gpus"]]
    present = {g["type"] for s in d["cluster"]["servers"] for g in s["gpus"]}
    d["cluster"]["gpu_types"] = {k: v for k, v in d["cluster"]["gpu_types"].items() if k in present}
    for job in d["jobs"]:
        for key in ("train_time", "sync_time", "throughput"):
            if job.get(key):
                job[key] = {k: v for k, v in job[key].items() if k in present}
