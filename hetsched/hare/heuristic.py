"""Run a heuristic on an instance and report it like a solve: validated objective, the
ordering relaxation's lower bound (when it has one) and the gap between them."""

from __future__ import annotations

import time

from hetsched.core.errors import HetschedError
from hetsched.hare.algorithm1 import alpha, hare_alg1
from hetsched.hare.list_scheduling import MACHINE_RULES
from hetsched.hare.orderings import ORDERINGS, ordering
from hetsched.hare.view import hare_view
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import refuse_large
from hetsched.schedule.validate import validate
from hetsched.solvers.finalize import finalize
from hetsched.solvers.result import SolveResult, Status

ALGORITHMS = ("hare-alg1",)


def run_heuristic(
    instance: Instance,
    algorithm: str = "hare-alg1",
    order: str = "hare-sched-rl",
    rule: str = "earliest_available",
    time_limit: float | None = None,
    threads: int | None = None,
    seed: int = 0,
    gap: float = 0.0,
) -> SolveResult:
    """Algorithm 1 (HPDC'22) with H from ``order``; ``time_limit`` and ``gap`` (the relative gap
    a MIP relaxation may stop at: H needs its point, not its proof) apply to the ordering's
    relaxation."""
    if algorithm not in ALGORITHMS:
        raise HetschedError(f"unknown algorithm '{algorithm}' (known: {', '.join(ALGORITHMS)})")
    if order not in ORDERINGS:
        raise HetschedError(f"unknown order '{order}' (known: {', '.join(ORDERINGS)})")
    if rule not in MACHINE_RULES:
        raise HetschedError(f"unknown machine rule '{rule}' (known: {', '.join(MACHINE_RULES)})")
    refuse_large(instance, f"Algorithm 1 ({algorithm})")
    t0 = time.perf_counter()
    ordered = ordering(order, instance, time_limit=time_limit, threads=threads, seed=seed, gap=gap)
    if ordered.priority is None:  # no H within the time limit: say so, as a solve would
        return SolveResult(
            instance=instance.name,
            model=algorithm,
            solver=f"order:{order}",
            status=Status.TIME_LIMIT,
            seconds=time.perf_counter() - t0,
            notes=list(ordered.notes),
        )
    view = hare_view(instance)
    t1 = time.perf_counter()
    run = hare_alg1(view, ordered.priority, rule)  # type: ignore[arg-type]
    t2 = time.perf_counter()
    schedule = run.to_schedule(instance.name, instance_hash(instance))
    claimed, bound, order_notes = run.objective(), ordered.bound, ordered.notes
    del run, ordered  # the order and priorities (16 B a task) before the validator's peak
    report = validate(instance, schedule)
    a = alpha(view)
    notes = list(order_notes) + [
        f"rule {rule}; list scheduling {t2 - t1:.3f} s for {view.n_tasks} tasks; alpha = {a:.6g}, "
        f"claimed ratio alpha(2+alpha) = {a * (2 + a):.6g}"
    ]
    result = SolveResult(
        instance=instance.name,
        model=algorithm,
        solver=f"order:{order}",
        status=Status.FEASIBLE,
        bound=bound,
        solution=schedule,
        solver_objective=claimed,
        notes=notes,
    )
    # invalid: a bug in the algorithm, never a result; meeting the relaxation's proven bound: optimal
    finalize(result, report, optimal_on_bound=True)
    result.seconds = time.perf_counter() - t0
    return result
