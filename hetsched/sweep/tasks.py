"""hetsched's methods in a sweep: :func:`run_task`, one run executed in a worker process (local
pool or Dask), a plain function of a picklable :class:`~hetsched.sweep.spec.Task` returning a
plain dict (one store row); :func:`check_method`, whether a spec's method exists; and the two
entry points :func:`load_spec` and :func:`run_sweep`, which hand both to the generic reader
(:mod:`hetsched.sweep.spec`) and executor (:mod:`hetsched.sweep.runner`).

Every returned schedule was checked by the independent validator inside ``solve``,
``run_heuristic`` or the simulator; the row carries the validator's verdict. A run that fails
is recorded with status ``error`` and the reason, so the sweep goes on and the failure is kept."""

from __future__ import annotations

import math
import time
import traceback
from typing import Any

from hetsched.core.errors import HetschedError
from hetsched.sweep.runner import SweepReport, execute
from hetsched.sweep.spec import SweepSpec, Task, read_spec


def check_method(kind: str, name: str, params: dict) -> None:
    """Raise HetschedError unless the method exists: a formulation the solver takes, a heuristic,
    or a simulator policy (built once, as a sweep would)."""
    if kind == "solve":
        from hetsched.exact.registry import find_formulation
        from hetsched.solvers import SOLVERS

        find_formulation(name, SOLVERS[params.get("solver", "highs")].model_kind)
    elif kind == "heuristic":
        from hetsched.hare.heuristic import ALGORITHMS

        if name not in ALGORITHMS:
            raise HetschedError(f"unknown algorithm '{name}' (known: {', '.join(ALGORITHMS)})")
    else:
        from hetsched.sim.gang_engine import CONVENTIONS
        from hetsched.sim.registry import make_policy

        make_policy(name)
        for key, zero_ok in (("round_seconds", False), ("restore_seconds", True)):
            value = params.get(key, 1.0)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (number and math.isfinite(value) and (value > 0 or zero_ok and value == 0)):
                raise HetschedError(
                    f"{key} must be a number {'>=' if zero_ok else '>'} 0 (got {value!r})"
                )
        known = ("auto", *CONVENTIONS)
        if params.get("convention", "auto") not in known:
            raise HetschedError(
                f"convention must be one of {', '.join(known)} (got {params['convention']!r})"
            )


def load_spec(path) -> SweepSpec:
    """Read a sweep spec and check that every method exists (:func:`read_spec`)."""
    return read_spec(path, check_method)


def run_sweep(spec: SweepSpec, **options) -> SweepReport:
    """Run the spec's missing runs with :func:`run_task` (options: :func:`execute`'s)."""
    return execute(spec, run_task, **options)


def run_task(task: Task) -> dict[str, Any]:
    """Run ``task`` and return its row (``key, method, instance, seed, status, objective, bound,
    gap, valid, seconds, payload``)."""
    row: dict[str, Any] = {
        "key": task.key,
        "method": task.method.label,
        "instance": task.source,
        "seed": task.seed,
        "status": "error",
        "objective": None,
        "bound": None,
        "gap": None,
        "valid": None,
        "seconds": None,
        "payload": {},
    }
    t0 = time.perf_counter()
    try:
        row.update(_run(task))
    except Exception as exc:  # recorded, not raised: one failing run must not stop a sweep
        row["payload"] = {"error": f"{exc.__class__.__name__}: {exc}"}
        if not isinstance(exc, HetschedError):
            row["payload"]["traceback"] = traceback.format_exc(limit=5)
    row["seconds"] = round(time.perf_counter() - t0, 6)
    return row


def _instance(task: Task):
    if task.is_file:
        from hetsched.instance.io import load_instance

        return load_instance(task.source)
    from hetsched.sim.workloads import load_workload

    return load_workload(task.source, seed=task.seed)


def _run(task: Task) -> dict[str, Any]:
    m = task.method
    inst = _instance(task)
    if m.kind == "solve":
        from hetsched.exact.solve import solve

        res = solve(
            inst,
            m.name,
            m.params.get("solver", "highs"),
            time_limit=task.time_limit,
            threads=task.threads,
            seed=task.seed,
            options=m.params.get("options"),
        )
        return _from_result(res)
    if m.kind == "heuristic":
        from hetsched.hare.heuristic import run_heuristic

        extra = {k: m.params[k] for k in ("order", "rule") if k in m.params}
        res = run_heuristic(
            inst, m.name, time_limit=task.time_limit, threads=task.threads, seed=task.seed, **extra
        )
        return _from_result(res)
    from hetsched.sim.run import run_policy

    extra = {k: float(m.params[k]) for k in ("round_seconds", "restore_seconds") if k in m.params}
    convention = m.params.get("convention", "auto")
    summary = run_policy(
        inst, m.name, seed=task.seed, workload=task.source, convention=convention, **extra
    )
    summary.pop("_jct", None)
    metrics = summary["metrics"]
    # the objective of every method in a sweep is Hare's sum_n w_n C_n, so rows compare across methods
    return {
        "status": "done" if summary["valid"] else "invalid",
        "objective": metrics.get("weighted_completion"),
        "valid": bool(summary["valid"]),
        "payload": summary,
    }


def _from_result(res) -> dict[str, Any]:
    out = res.to_dict()
    out.pop("solution", None)  # schedules can be large; the row keeps the numbers and the verdict
    return {
        "status": res.status.value,
        "objective": res.objective,
        "bound": res.bound,
        "gap": res.gap,
        "valid": None if res.validation is None else bool(res.validation.valid),
        "payload": out,
    }
