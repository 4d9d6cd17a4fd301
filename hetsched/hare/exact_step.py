"""Step 4 of the Hare_Sched portfolio (:mod:`hetsched.hare.portfolio`): the strongest exact
method that takes the instance, CP-SAT followed by column generation over job schedules where
both take it; on small instances the dispatch search first (:mod:`hetsched.hare.dispatch_search`)."""

from __future__ import annotations

import time
from typing import Any

from hetsched.core.errors import HetschedError
from hetsched.instance.model import Instance
from hetsched.solvers.result import SolverOptions

#: where the exact pick is CP-SAT and column generation takes the instance, CP-SAT's part of
#: the exact step's budget (column generation, the stronger bound, gets the rest)
CPSAT_SHARE = 0.5
#: up to this many tasks the dispatch search (:mod:`hetsched.hare.dispatch_search`) follows a
#: short CP-SAT, from the best schedule so far, with DISPATCH_SHARE of what is left (column
#: generation's root bound after it takes seconds at these sizes): from CP-SAT's 163.9 it
#: proves ladder(24, 4) optimal (163.1) in 250 CPU s, where CP-SAT has a bound of 124 after
#: 600 s and column generation's branch-and-price 161.0 after 300 s; its nodes grow about
#: 30-fold per 4 tasks (ladder 16 -> 20 -> 24: 59 thousand, 5.2 million, 287 million)
DISPATCH_FIRST_TASKS = 24
DISPATCH_SHARE = 0.85
#: the search proves faster the closer its upper bound: CP-SAT runs first for this share of the
#: budget (ladder(24, 4) at 600 s, the search on one thread: from the job-order search's 167.9
#: it ended its share at 165.5, unproven; after CP-SAT's 163.9 it proved 163.1, 392 s in all;
#: on two threads, after CP-SAT's 165.6, 327 s in all)
DISPATCH_CPSAT_SHARE = 0.15
#: with no time limit, CP-SAT's seconds before the search (which then runs to the end): it
#: proves most small instances in well under a second (hare_fig9: the README's first command)
UNTIMED_CPSAT = 30.0
#: ... and only with at least this budget: the first call in a fresh install compiles its
#: kernel (about 12 s, then cached on disk), which a shorter limit would not absorb
DISPATCH_MIN_BUDGET = 30.0


def exact_step(run: Any, budget: float | None, opts: SolverOptions) -> None:
    """Step 4 of the portfolio (``run``: what it found so far, its best schedule, bound and
    notes): ``--solver auto``'s exact pick within ``budget`` seconds (None: no limit). Where
    the pick is CP-SAT (strong schedules, weak bounds) and column generation over job schedules
    takes the instance, CP-SAT gets :data:`CPSAT_SHARE` of the budget and column generation the
    rest, from the best schedule found so far (its windows and first incumbent), all of it on the
    bound (``prove``: no dive, no integer master): on ladder(24, 4) CP-SAT's bound is 124 after
    600 s, column generation's 160.6 after 7 s."""
    from hetsched.solvers import SOLVERS

    if run.proven():
        return
    if (budget is None or budget > 0.1) and _dispatch_first(run, budget, opts):
        return
    try:
        spec, follow = exact_methods(run.instance)
    except HetschedError as exc:  # no exact model takes it: the schedules and bounds above
        run.notes.append(f"no exact method: {exc}")
        return
    if budget is not None and budget <= 0.1:
        run.limited = True
        run.notes.append(f"no time left for {spec.kind}")
        return
    follow = None if budget is None else follow
    t0 = time.perf_counter()
    first = budget if follow is None or budget is None else CPSAT_SHARE * budget
    solver = next(name for name, b in SOLVERS.items() if b.model_kind == spec.kind)
    _from_best(run, spec, solver, first, opts)
    rest = None if budget is None else budget - (time.perf_counter() - t0)
    if follow is None or run.proven() or rest is None or rest <= 0.1:
        return
    _colgen_bound(run, follow, rest, opts)


def _colgen_bound(run: Any, spec: Any, rest: float, opts: SolverOptions) -> None:
    """Column generation over job schedules on the bound alone (``prove``: no dive, no integer
    master) for ``rest`` seconds, from the best schedule so far (its windows)."""
    try:
        _from_best(run, spec, "colgen", rest, opts, prove=True)
    except HetschedError as exc:  # e.g. times off the 10^-4 grid: the answers so far stand
        run.notes.append(f"colgen: {exc}")


def _from_best(
    run: Any, spec: Any, solver: str, seconds: float | None, opts: SolverOptions, **options: Any
) -> None:
    """``solver`` on ``spec`` for ``seconds`` (None: no limit), started from the best schedule
    so far where the model takes a ``hint``; what it finds goes to ``run``."""
    from hetsched.exact.solve import solve

    assert run.best is not None
    if "hint" in spec.options:
        options = {"hint": run.best[2], **options}
    res = solve(
        run.instance,
        spec,
        solver,
        seconds,
        opts.gap,
        opts.threads,
        opts.seed,
        options=options or None,
    )
    run.take(solver, res)


def _dispatch_first(run: Any, budget: float | None, opts: SolverOptions) -> bool:
    """On instances of at most DISPATCH_FIRST_TASKS tasks and a budget of DISPATCH_MIN_BUDGET
    seconds or more, CP-SAT for DISPATCH_CPSAT_SHARE of it, then the dispatch search from the best
    schedule so far, then (not proven) column generation for the bound with what is left.
    Returns whether it ran (False: the instance is not one it takes first). ``budget`` None:
    CP-SAT for UNTIMED_CPSAT seconds, then the search to the end."""
    from hetsched.exact.registry import find_formulation

    if run.instance.n_tasks > DISPATCH_FIRST_TASKS:
        return False
    if budget is not None and budget < DISPATCH_MIN_BUDGET:
        return False
    spec = find_formulation("hare-sched", "dispatch-search")
    if spec.refusal(run.instance) is not None:
        return False
    try:
        first, follow = exact_methods(run.instance)
    except HetschedError:
        return False
    if first.kind != "cpsat":  # e.g. bp, where every job is one task: it proves 100 of them
        return False
    t0 = time.perf_counter()
    # a close upper bound first, and the proof itself where CP-SAT finds it quickly
    _from_best(
        run,
        first,
        "cpsat",
        UNTIMED_CPSAT if budget is None else DISPATCH_CPSAT_SHARE * budget,
        opts,
    )
    if run.proven():
        return True
    left = None if budget is None else budget - (time.perf_counter() - t0)
    _from_best(run, spec, "dfs", None if left is None else DISPATCH_SHARE * left, opts)
    if run.proven() or budget is None:
        return True
    rest = budget - (time.perf_counter() - t0)
    if rest <= 0.1:
        return True
    if follow is not None:
        _colgen_bound(run, follow, rest, opts)
    return True


def exact_methods(instance: Instance) -> tuple[Any, Any]:
    """Step 4's methods: ``--solver auto``'s exact pick, and the column generation that follows
    it where the pick is CP-SAT and column generation takes the instance (else None). Raises
    HetschedError where no exact model takes the instance."""
    from hetsched.exact.registry import auto_formulation, find_formulation

    spec, _ = auto_formulation("hare-sched", instance, exclude=("portfolio",))
    if spec.kind != "cpsat":
        return spec, None
    colgen = find_formulation("hare-sched", "colgen")
    return spec, colgen if colgen.refusal(instance) is None else None


def strong_exact_bound(instance: Instance) -> bool:
    """Whether step 4 brings a bound stronger than the interval MIP's: the machine-schedule
    branch-and-price or column generation over job schedules (ladder(24, 4): 159.5 against the
    MIP's 132.9 at 30 s; ladder(48, 4): the MIP, stopped at its share of 60 s, stayed below the LP)."""
    try:
        spec, follow = exact_methods(instance)
    except HetschedError:
        return False
    return spec.kind in ("colgen", "machine-schedules") or follow is not None
