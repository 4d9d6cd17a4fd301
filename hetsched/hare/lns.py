"""Large-neighbourhood search for Hare_Sched (4)-(8) (issue 44, item 1).

Each move frees the tasks of a few jobs, keeps every other task where the incumbent has it (its
GPU and its training interval), and re-solves the freed jobs with CP-SAT (the ``hare-sched``
CP-SAT formulation with its ``frozen`` jobs), hinted with the incumbent, for at most
:data:`MOVE_SECONDS`. The neighbourhood contains the incumbent, so a move never loses it; a
schedule the independent validator finds cheaper becomes the incumbent.

Which jobs: one job drawn at random, and the jobs that run beside it the longest (the overlap of
their spans [first start, completion] in the incumbent), since only jobs that share time can
trade GPUs. How many: start from two; a move whose neighbourhood CP-SAT solved to optimality
frees one job more next time (at most all but one: the rest is the exact step's), a move its
clock stopped one fewer (at least one). A neighbourhood solved at the incumbent is not solved
again until the incumbent changes; after :data:`REPEATS` such draws in a row the search ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule
from hetsched.schedule.validate import validate
from hetsched.solvers.result import SolverOptions, Status

#: CP-SAT's limit on one move (seconds)
MOVE_SECONDS = 2.0
#: jobs freed by the first move
FIRST_SIZE = 2
#: moves made when neither a clock nor a count is given
MOVES = 20
#: draws in a row of neighbourhoods already solved at the incumbent before the search ends
REPEATS = 50


@dataclass
class LnsRun:
    """The best schedule met and its validated objective, with what the search did."""

    objective: float
    schedule: TaskSchedule
    moves: int = 0
    improvements: int = 0
    solved: int = 0  # moves whose neighbourhood CP-SAT solved to optimality


def spans(instance: Instance, schedule: TaskSchedule, completion: dict[str, float]) -> np.ndarray:
    """[first start, completion] of each job (instance order) in ``schedule``, as a (jobs, 2)
    array; ``completion``: each job's C_n in it, as the validator's report has them."""
    index = {j: n for n, j in enumerate(schedule.job_ids)}
    starts, jobs = np.asarray(schedule.start), np.asarray(schedule.job)
    first = [float(starts[jobs == index[j.id]].min()) for j in instance.jobs]
    last = [float(completion[j.id]) for j in instance.jobs]
    return np.column_stack([first, last])


def neighbourhood(span: np.ndarray, size: int, rng: np.random.Generator) -> list[int]:
    """``size`` jobs: one drawn at random and those whose spans overlap its own the longest
    (ties broken at random)."""
    n = len(span)
    size = max(1, min(size, n))
    centre = int(rng.integers(n))
    overlap = np.minimum(span[:, 1], span[centre, 1]) - np.maximum(span[:, 0], span[centre, 0])
    overlap[centre] = np.inf
    order = np.lexsort((rng.random(n), -overlap))  # longest overlap first
    return sorted(int(j) for j in order[:size])


def lns_takes(instance: Instance) -> bool:
    """Whether the search can run: CP-SAT's Hare_Sched model takes the instance."""
    from hetsched.exact.registry import find_formulation

    return find_formulation("hare-sched", "cpsat").refusal(instance) is None


def lns(
    instance: Instance,
    objective: float,
    schedule: TaskSchedule,
    left: Callable[[], float] | None = None,
    seed: int = 0,
    moves: int | None = None,
) -> LnsRun:
    """Moves (module docstring) from ``schedule`` (validated objective ``objective``) while
    ``left()``, the seconds the caller has left, is at least 0.2 and fewer than ``moves`` were
    made (None: no count; both None: :data:`MOVES`); each move's limit is :data:`MOVE_SECONDS`,
    or ``left()`` if less. One CP-SAT worker, seeded by ``seed`` and the move's number."""
    from hetsched.exact.registry import find_formulation
    from hetsched.solvers.cpsat import solve_cpsat

    spec = find_formulation("hare-sched", "cpsat")
    run = LnsRun(objective, schedule)
    rng = np.random.default_rng([seed, 44, 5])
    size = min(FIRST_SIZE, len(instance.jobs) - 1)
    span = spans(instance, schedule, validate(instance, schedule).completion)
    ids = [j.id for j in instance.jobs]
    if moves is None and left is None:
        moves = MOVES
    exhausted: set[frozenset[int]] = set()  # neighbourhoods whose optimum is the incumbent
    repeats = 0
    while len(ids) > 1 and (moves is None or run.moves < moves):
        limit = MOVE_SECONDS if left is None else min(MOVE_SECONDS, left())
        if limit < 0.2:
            break
        free = frozenset(neighbourhood(span, size, rng))
        if free in exhausted:  # nothing to find there: look wider
            size, repeats = min(size + 1, len(ids) - 1), repeats + 1
            if repeats > REPEATS:
                break
            continue
        frozen = [ids[n] for n in range(len(ids)) if n not in free]
        problem = spec.build(instance, hint=run.schedule, frozen=frozen)
        raw = solve_cpsat(problem, SolverOptions(limit, 0.0, 1, seed + run.moves))
        run.moves += 1
        repeats = 0
        if raw.status == Status.OPTIMAL:  # the neighbourhood's optimum: look wider
            run.solved += 1
            exhausted.add(free)
            size = min(size + 1, len(ids) - 1)
        else:
            size = max(1, size - 1)
        if raw.value is None:
            continue
        found = spec.extract(problem, instance, raw.value)
        report = validate(instance, found)
        if report.valid and report.objective < run.objective - 1e-9:
            run.objective, run.schedule = float(report.objective), found
            run.improvements += 1
            span = spans(instance, found, report.completion)
            exhausted.clear()  # a new incumbent: every neighbourhood may hold a better one
    return run
