"""Solve an instance with a formulation and a solver; validate what comes back.

The objective reported is the independent validator's recomputation. A solution that fails
validation, or whose recomputed objective disagrees with the solver's claim on an exact model,
turns the status into ``error`` -- it is never passed off as a result.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import replace

from hetsched.core.collector import collector_paused
from hetsched.core.deadline import BuildTimeout, deadline, grace
from hetsched.core.errors import HetschedError
from hetsched.exact.registry import auto_formulation, find_formulation, validator_of
from hetsched.exact.spec import FormulationSpec
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule
from hetsched.solvers import SOLVERS, Status
from hetsched.solvers.finalize import finalize
from hetsched.solvers.result import RawResult, SolveResult, SolverOptions

ROOT_CUT_SHARE = 1 / 3  # of the time limit, at most, for a formulation's cuts on the LP relaxation
ROOT_CUT_SECONDS = 60.0  # ... and without a limit


def build_options(spec: FormulationSpec, options: dict | None) -> dict:
    """The keyword options for ``spec.build``: those given (None: not given), each one the
    formulation declares (``spec.options``) and of the type of ``build``'s default."""
    given = {k: v for k, v in (options or {}).items() if v is not None}
    unknown = sorted(set(given) - set(spec.options))
    if unknown:
        raise HetschedError(
            f"model '{spec.name}' takes no option {', '.join(unknown)}"
            f"{' (it takes: ' + ', '.join(spec.options) + ')' if spec.options else ''}"
        )
    return {k: _typed_option(spec, k, v) for k, v in given.items()}


def _typed_option(spec: FormulationSpec, name: str, value: object) -> object:
    """``value`` checked against the type of ``build``'s default for ``name`` (its declaration):
    a flag takes true/false or 1/0 only (the string "False" is not true), a number a number,
    a name a string; an option without a default is passed as given."""
    default = inspect.signature(spec.build).parameters[name].default
    kind = type(default)
    if isinstance(default, bool):
        if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
            return bool(value)
        want = "true or false (or 1/0)"
    elif isinstance(default, (int, float)):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return kind(value) if kind is float else value
        want = "a number"
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
        want = "a string"
    else:
        return value
    raise HetschedError(f"option {name} of model '{spec.name}' must be {want} (got {value!r})")


def solve(
    instance: Instance,
    model: str | FormulationSpec = "hare-sched",
    solver: str = "highs",
    time_limit: float | None = None,
    gap: float = 0.0,
    threads: int | None = None,
    seed: int = 0,
    options: dict | None = None,
) -> SolveResult:
    """Build ``model`` for ``instance``, solve it with ``solver`` and validate the solution.

    ``time_limit`` covers the whole solve: the solver gets what building the model left of it (at
    least 0.05 s; each formulation refuses in ``supports()`` what it could not build quickly); ``gap`` is the relative MIP gap at which the solver may stop; ``options`` go to
    the formulation's ``build`` (only the names in its ``options``).
    """
    t0 = time.perf_counter()  # the limit covers finding the formulation too (its first import)
    picked = None
    if solver == "auto":
        if isinstance(model, FormulationSpec):
            raise HetschedError(
                "--solver auto picks among registered formulations; pass a solver with a spec"
            )
        spec, why = auto_formulation(model, instance)
        solver = next(name for name, b in SOLVERS.items() if b.model_kind == spec.kind)
        picked = f"--solver auto picked {solver}: {why}"
    if solver not in SOLVERS:
        raise HetschedError(f"unknown solver '{solver}' (known: auto, {', '.join(SOLVERS)})")
    backend = SOLVERS[solver]
    if picked is None:
        spec = (
            model
            if isinstance(model, FormulationSpec)
            else find_formulation(model, backend.model_kind)
        )
        reason = spec.refusal(instance)
        if reason is not None:  # refused before anything is built: never a hang past the time limit
            raise HetschedError(
                f"model '{spec.name}' with --solver {solver} does not take this instance: {reason}"
            )
    if spec.kind != backend.model_kind:
        raise HetschedError(
            f"solver '{solver}' takes {backend.model_kind} models; '{spec.name}' is {spec.kind}"
        )

    options = build_options(spec, options)
    cuts = 0
    # building the model has no clock: a deadline at the limit stops it (a build that takes the
    # whole limit leaves the solver nothing, and freeing a large model takes the grace); handing
    # the model to a solver without a clock of its own is stopped at the limit plus grace
    end = None if time_limit is None else t0 + float(time_limit) + grace(time_limit)
    try:
        # a model's components are alive until it is solved: the collector's passes over them
        # free nothing (building Gavel's 16,384-job LP: 1.4 -> 0.3-0.4 CPU s without them)
        with (
            deadline(None if end is None else max(1e-3, t0 + time_limit - time.perf_counter())),
            collector_paused(),
        ):
            built = spec.build(instance, **options)
        left = None  # the limit covers the whole solve: building the model used part of it
        if time_limit is not None:
            left = max(0.05, float(time_limit) - (time.perf_counter() - t0))
        root = None
        if spec.separate is not None and spec.separate_fractional and backend.model_kind == "pyomo":
            from hetsched.solvers.root_cuts import root_cutting_planes  # Pyomo: only when used

            root = root_cutting_planes(
                built, spec.separate, ROOT_CUT_SECONDS if left is None else ROOT_CUT_SHARE * left
            )
            if left is not None:
                left = max(0.05, float(time_limit) - (time.perf_counter() - t0))
        # a backend with its own clock stops itself and keeps its incumbent
        unclocked = end is not None and not backend.own_clock
        with deadline(max(1e-3, end - time.perf_counter()) if unclocked else None):
            raw = backend.solve(built, SolverOptions(left, gap, threads, seed))
            if root is not None and root.bound is not None and raw.status != Status.OPTIMAL:
                raw.bound = _better_bound(raw.bound, root.bound, spec.sense)
            while spec.separate is not None and raw.status == Status.OPTIMAL:
                added = spec.separate(built, raw.value)
                if not added:
                    break
                cuts += added
                raw = _resolve(
                    backend,
                    built,
                    raw,
                    t0,
                    SolverOptions(time_limit, gap, threads, seed),
                    spec.sense,
                )
    except BuildTimeout:
        return SolveResult(
            instance=instance.name,
            model=spec.name,
            solver=solver,
            status=Status.TIME_LIMIT,
            seconds=time.perf_counter() - t0,
            notes=([picked] if picked else [])
            + [
                f"building the model and passing it to {solver} did not finish within the time "
                f"limit ({time_limit:g} s): no solution and no bound"
            ],
            sense=spec.sense,
        )
    if spec.objective_transform is not None:
        raw.objective = (
            None if raw.objective is None else spec.objective_transform(raw.objective, built)
        )
        raw.bound = None if raw.bound is None else spec.objective_transform(raw.bound, built)
    notes = ([picked] if picked else []) + list(getattr(built, "notes", []))
    if root is not None:
        notes.append(
            f"cuts on the LP relaxation: {root.cuts} in {root.rounds} rounds, {root.seconds:.1f} s"
            f" (stopped: {root.why}), LP bound {root.bound if root.bound is None else f'{root.bound:.6g}'}"
        )
    if cuts:
        notes.append(f"{cuts} lazy inequalities added by separation")
    result = SolveResult(
        instance=instance.name,
        model=spec.name,
        solver=solver,
        status=raw.status,
        bound=raw.bound,
        solver_objective=raw.objective,
        objective_is_bound=spec.objective_is_bound,
        notes=notes,
        log=raw.log,
        sense=spec.sense,
        bound_side=spec.bound_side or ("lower" if spec.sense == "min" else "upper"),
    )
    report = None
    if raw.value is not None or raw.solution is not None:
        with collector_paused():  # reading a large model's values: nothing to free meanwhile
            result.solution = _named(
                instance,
                spec.extract(built, instance, raw.value if raw.solution is None else raw.solution),
            )
            report = validator_of(spec)(instance, result.solution)
    # a relaxation's objective is its own optimum (its "solution" need not be feasible); a model
    # whose claim may exceed its solution's value (completion variables >= the real ones) says so
    finalize(result, report, exact=getattr(built, "exact", True))
    result.seconds = time.perf_counter() - t0
    return result


def _resolve(
    backend,
    built,
    last: RawResult,
    t0: float,
    opts: SolverOptions,
    sense: str,
) -> RawResult:
    """Re-solve after cuts were added. The last solve's bound stays a bound of the full model; a
    loop the time limit cuts short reports that bound and no solution (its solution violated a cut)."""
    left = None if opts.time_limit is None else opts.time_limit - (time.perf_counter() - t0)
    raw = None
    if left is None or left > 0.05:
        raw = backend.solve(built, replace(opts, time_limit=left))
        if raw.status == Status.OPTIMAL:
            return raw
    bounds = [b for b in (last.bound, last.objective, raw and raw.bound) if b is not None]
    return RawResult(
        Status.TIME_LIMIT,
        None,
        (max if sense == "min" else min)(bounds) if bounds else None,
        last.seconds + (raw.seconds if raw else 0.0),
        log=f"{last.log}; cutting-plane loop stopped at the time limit",
    )


def _better_bound(a: float | None, b: float, sense: str) -> float:
    """The tighter of two bounds of one minimization (the larger) or maximization (the smaller)."""
    if a is None:
        return b
    return max(a, b) if sense == "min" else min(a, b)


def _named(instance: Instance, solution: object) -> object:
    """A task schedule that names its instance (and its content hash, by which ``hetsched show``
    finds the instance), whichever method made it; other solutions as they are."""
    if isinstance(solution, TaskSchedule) and not (solution.instance and solution.instance_hash):
        return replace(solution, instance=instance.name, instance_hash=instance_hash(instance))
    return solution
