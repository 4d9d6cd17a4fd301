"""Run policies on a workload and keep the results: a per-job CSV per policy and its summary in
the run store ``runs.jsonl`` (:mod:`hetsched.core.runstore`), written as each run ends; ``compare``
skips runs already stored for the same policy, seed, workload and engine options (a rerun
resumes) and draws the JCT CDFs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched.core.deadline import RunTimeout, deadline
from hetsched.core.errors import HetschedError
from hetsched.core.jsonio import save_json
from hetsched.core.runstore import RunStore
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.sim.engine import simulate
from hetsched.sim.gang_engine import CONVENTIONS, simulate_gang
from hetsched.sim.metrics import gang_job_rows, gang_metrics, job_rows, metrics, write_job_csv
from hetsched.sim.registry import is_job_level, make_policy


def file_stem(policy: str) -> str:
    """A policy name as a file name (``gavel:makespan`` -> ``gavel_makespan``)."""
    return policy.replace(":", "_").replace(",", "-")


#: what identifies a stored run (the engine options are None for task-level policies)
RUN_KEY = ("policy", "seed", "instance_hash", "round_seconds", "restore_seconds", "convention")
RUNS = "runs.jsonl"

RESTORE_SECONDS = {"hetsched": 10.0, "gavel": 0.0}  # Hadar's delay; Gavel's simulator has none


def resolve_convention(instance: Instance, convention: str = "auto") -> str:
    """``auto``: Gavel's convention on a workload read from one of Gavel's traces, else ours
    (:mod:`hetsched.sim.gang_engine`); otherwise the convention named."""
    if convention == "auto":
        return "gavel" if (instance.metadata or {}).get("format") == "gavel-trace" else "hetsched"
    if convention not in CONVENTIONS:
        from hetsched.core.errors import InputError

        raise InputError(
            "simulate", "--convention", f"auto, {', '.join(CONVENTIONS)}, not {convention!r}"
        )
    return convention


class RunNotFinished(HetschedError):
    """A policy's run did not finish within its time limit (wall time): nothing of it is kept."""

    def __init__(self, policy: str, seconds: float, solver: dict | None = None):
        self.policy, self.seconds, self.solver = policy, seconds, solver
        so_far = ""
        if solver:  # how far the policy's per-round problems got (e.g. Hadar's slots)
            counts = ", ".join(f"{k} {v}" for k, v in solver.items() if isinstance(v, int))
            so_far = f"; by then: {counts}" if counts else ""
        super().__init__(f"{policy} did not finish within the time limit ({seconds:g} s){so_far}")


def run_policy(
    instance: Instance,
    policy: str,
    seed: int = 0,
    out: str | Path | None = None,
    workload: str = "",
    round_seconds: float = 360.0,
    restore_seconds: float | None = None,
    convention: str = "auto",
    time_limit: float | None = None,
) -> dict:
    """Simulate, validate, measure; write ``out/POLICY-jobs.csv`` and add the summary to the run
    store ``out/runs.jsonl`` if ``out``.
    Job-level policies run on the gang engine with ``round_seconds`` rounds, ``restore_seconds``
    checkpoint-restore delays (default: 10 s, 0 under Gavel's convention) and the engine's
    ``convention`` (:func:`resolve_convention`); task-level ones on the task engine (these
    options do not apply). A run not done after ``time_limit`` seconds of wall time (None: no
    limit) stops with :class:`RunNotFinished` and writes nothing."""
    t = time.perf_counter()
    try:
        with deadline(time_limit, exception=RunTimeout):
            machine, result, extra, measured = _simulated(
                instance, policy, seed, round_seconds, restore_seconds, convention
            )
    except RunTimeout as stop:
        # the deadline's own exception, or one that C code put in its place (its cause)
        solver = getattr(stop, "solver", getattr(stop.__cause__, "solver", None))
        raise RunNotFinished(policy, float(time_limit), solver) from None
    seconds = time.perf_counter() - t
    summary = {
        "policy": policy,
        "seed": seed,
        "workload": workload or instance.name,
        "instance_hash": instance_hash(instance),
        "metrics": measured,
        "valid": bool(result.validation.valid),
        "seconds": round(seconds, 3),
        **extra,
    }
    if out is not None:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        write_job_csv(machine, result, d / f"{file_stem(policy)}-jobs.csv")
        RunStore(d / RUNS, RUN_KEY).add(summary)  # last: a run without its CSV is not stored
    summary["_jct"] = [
        r.jct
        for r in (
            gang_job_rows(instance, result) if is_job_level(policy) else job_rows(machine, result)
        )
    ]
    return summary


def _simulated(
    instance: Instance,
    policy: str,
    seed: int,
    round_seconds: float,
    restore_seconds: float | None,
    convention: str,
) -> tuple[Instance, object, dict, dict]:
    """One validated run of ``policy`` (:func:`run_policy`): the machine it ran on (the
    instance, or the policy's GPU groups), the engine's result, what the summary says of the
    run, and the metrics."""
    pol = make_policy(policy, seed=seed)
    if is_job_level(policy):
        convention = resolve_convention(instance, convention)
        if restore_seconds is None:
            restore_seconds = RESTORE_SECONDS[convention]
        try:
            result = simulate_gang(
                instance, pol, round_seconds, restore_seconds, convention=convention
            )
        except (RunTimeout, Exception) as stop:  # what the policy solved so far goes with it
            if hasattr(pol, "solver_stats"):  # (an error may have replaced the stop: its cause)
                stop.solver = pol.solver_stats()
            raise
        extra = {
            "level": "job",
            "rounds": result.rounds,
            "preemptions": result.preemptions,
            "round_seconds": round_seconds,
            "restore_seconds": restore_seconds,
            "convention": convention,
        }
        if getattr(pol, "pack", False):
            extra["packing"] = True
        if hasattr(pol, "solver_stats"):  # how the policy's per-round problems were solved
            extra["solver"] = pol.solver_stats()
        return instance, result, extra, gang_metrics(instance, result)
    machine = pol.machine(instance) if hasattr(pol, "machine") else instance
    result = simulate(machine, pol)
    extra = {"level": "task", "tasks": len(result.schedule)}
    if machine is not instance:  # the policy ran on GPU groups: say which and how good
        g = pol.grouping
        extra["gpu_groups"] = {
            "groups": len(g.groups),
            "method": g.method,
            "spread": g.spread,
            "members": [[instance.gpus[m].id for m in grp] for grp in g.groups],
        }
    return machine, result, extra, metrics(machine, result)


def compare(
    instance: Instance,
    policies: list[str],
    seed: int = 0,
    out: str | Path = "sim-results",
    workload: str = "",
    progress=None,
    round_seconds: float = 360.0,
    restore_seconds: float | None = None,
    convention: str = "auto",
    time_limit: float | None = None,
) -> Comparison:
    """Run each policy (:func:`run_policy`) unless its result for the same workload and engine
    options is already in ``out``; put each run beside the proven lower bounds of its model
    (:mod:`hetsched.sim.bounds`: ``lower_bound`` and ``ratio_to_bound`` in each row); write
    ``compare.json`` (workload, bounds, policies) and the JCT CDF; return the same. A policy
    whose run is not done within ``time_limit`` seconds (each run's own) gets a row with
    ``finished: false`` and no metrics, is not stored, and is run again by a rerun."""
    d = Path(out)
    h = instance_hash(instance)
    conv = resolve_convention(instance, convention)
    restore = RESTORE_SECONDS[conv] if restore_seconds is None else restore_seconds
    store = RunStore(d / RUNS, RUN_KEY)
    rows = []
    with store.writer():  # a second compare into this folder is refused, never run beside it
        for p in policies:
            engine = (round_seconds, restore, conv) if is_job_level(p) else (None, None, None)
            kept = store.get((p, seed, h, *engine))
            if kept is not None and (d / f"{file_stem(p)}-jobs.csv").exists():
                summary = dict(kept)
                summary["_jct"] = list(
                    np.loadtxt(
                        d / f"{file_stem(p)}-jobs.csv",
                        delimiter=",",
                        skiprows=1,
                        usecols=5,
                        ndmin=1,
                    )
                )
                if progress:
                    progress(f"{p}: already in {d}, kept")
            else:
                try:
                    summary = run_policy(
                        instance, p, seed, d, workload, round_seconds, restore, conv, time_limit
                    )
                except RunNotFinished as exc:
                    rows.append(_unfinished(p, seed, workload or instance.name, exc.seconds))
                    if progress:
                        progress(str(exc))
                    continue
                if progress:
                    progress(
                        f"{p}: avg JCT {summary['metrics']['avg_jct']:.6g} ({summary['seconds']:.2f} s)"
                    )
            rows.append(summary)
    done = [r for r in rows if finished(r)]
    bounds = _attach_bounds(instance, done, seed, d / "compare.json", progress)
    result = Comparison(workload or instance.name, h, bounds, rows)
    save_json(d / "compare.json", result.to_dict(), indent=1)
    jct_cdf(done, d)
    return result


def finished(row: dict) -> bool:
    """A comparison row of a run that finished (a stopped run's row says ``finished: false``)."""
    return row.get("finished", True)


def _unfinished(policy: str, seed: int, workload: str, seconds: float) -> dict:
    """A comparison's row for a run stopped at its time limit: no metrics."""
    return {
        "policy": policy,
        "seed": seed,
        "workload": workload,
        "level": "job" if is_job_level(policy) else "task",
        "finished": False,
        "time_limit": seconds,
    }


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` wrote to ``compare.json``: the workload, its proven lower bounds by
    model (:mod:`hetsched.sim.bounds`) and one summary row per policy (with its ratios)."""

    workload: str
    instance_hash: str
    bounds: dict
    rows: list[dict]

    def to_dict(self) -> dict:
        return {
            "workload": self.workload,
            "instance_hash": self.instance_hash,
            "bounds": self.bounds,
            "policies": [{k: v for k, v in r.items() if k != "_jct"} for r in self.rows],
        }


def _attach_bounds(instance: Instance, rows: list[dict], seed: int, old: Path, progress) -> dict:
    """Compute (or reuse from an earlier ``compare.json``) the lower bounds of each model the
    runs used -- the job model, the task model, or the task model on a policy's GPU groups --
    and give each row its bound and ratios. Returns the bounds by name."""
    from hetsched.sim.bounds import ratios, workload_bounds

    known: dict[str, dict] = {}
    if old.exists():
        kept = json.loads(old.read_text())
        if isinstance(kept, dict) and kept.get("instance_hash") == instance_hash(instance):
            known = kept.get("bounds", {})
    for r in rows:
        machine = instance
        if "gpu_groups" in r:  # the task-level policy ran on GPU groups: bound that machine
            machine = make_policy(r["policy"], seed=seed).machine(instance)
        model = r["level"] + ("+packing" if r.get("packing") else "")
        name = f"{model}:{instance_hash(machine)[:12]}"
        if name not in known:
            b = workload_bounds(machine, model)
            known[name] = {"model": model, **b.to_dict()}
            if progress:
                progress(
                    f"lower bounds ({model} model): avg JCT {b.avg_jct:.6g}, "
                    f"makespan {b.makespan:.6g} ({b.seconds:.2f} s)"
                )
        r["lower_bound"] = name
        r["ratio_to_bound"] = ratios(r["metrics"], known[name])
    return {r["lower_bound"]: known[r["lower_bound"]] for r in rows}


def jct_cdf(rows: list[dict], out: Path) -> Path:
    """The JCT CDF of every policy in ``out/jct_cdf.png``."""
    from hetsched.plots.cdf import draw_jct_cdf

    return draw_jct_cdf({r["policy"]: r["_jct"] for r in rows}, out / "jct_cdf.png")
