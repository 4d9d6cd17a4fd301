"""What every exact method, relaxation and heuristic returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

from hetsched.schedule.model import TaskSchedule


class Status(str, Enum):
    OPTIMAL = "optimal"  # proven: bound == objective (within the solver's tolerances)
    FEASIBLE = "feasible"  # a solution, not proven optimal (gap limit reached, or rounding)
    TIME_LIMIT = "time_limit"  # stopped by the time limit; never reported as optimal
    INFEASIBLE = "infeasible"  # proven to have no solution
    ERROR = "error"  # solver failure, or a returned solution failed validation

    def __str__(self) -> str:  # print(result.status) shows "optimal", not "Status.OPTIMAL"
        return self.value


@dataclass(frozen=True)
class SolverOptions:
    """What every backend takes besides the model: the time limit in seconds (None: none), the
    relative gap to stop at, the threads (None: the solver's default) and the random seed."""

    time_limit: float | None = None
    gap: float = 0.0
    threads: int | None = None
    seed: int = 0  # any seed from 0 to 2**64 - 1; the solvers read ``solver_seed``

    @property
    def solver_seed(self) -> int:
        """The seed as HiGHS and CP-SAT take it (a 31-bit integer): ``seed mod 2**31``, so every
        seed below 2**31 reaches the solver unchanged."""
        return int(self.seed) % 2**31


@dataclass
class RawResult:
    """What a backend adapter reports before the formulation decodes the solution."""

    status: Status
    objective: float | None  # in the formulation's units
    bound: float | None
    seconds: float
    value: Callable[[Any], float] | None = (
        None  # reads a variable's value, when there is a solution
    )
    log: str = ""
    solution: Any = None  # a backend that decodes its own solution (no variables) returns it here


@dataclass
class SolveResult:
    """A solve of one instance by one model and method. ``objective`` is recomputed by the
    independent validator; ``solver_objective`` is what the solver claimed."""

    instance: str
    model: str
    solver: str
    status: Status
    objective: float | None = None  # set by finalize (the validator's value)
    bound: float | None = None
    gap: float | None = None  # set by finalize
    seconds: float = 0.0
    solution: Any = None
    solver_objective: float | None = None
    objective_is_bound: bool = False  # True for relaxations: the objective is a lower bound
    validation: Any = None
    notes: list[str] = field(default_factory=list)
    log: str = ""
    sense: str = "min"  # of the objective: "min" (bound <= objective) or "max" (bound >= objective)
    bound_side: str = "lower"  # relaxations: the side of the problem's optimum their value bounds

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """The JSON form; ``lazy`` passes on to the solution's (a schedule's rows as an iterator)."""
        solution = None
        if isinstance(self.solution, TaskSchedule):
            solution = self.solution.to_dict(lazy=lazy)
        elif self.solution is not None:
            solution = self.solution.to_dict()
        return {
            "instance": self.instance,
            "model": self.model,
            "solver": self.solver,
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "seconds": round(self.seconds, 6),
            "solution": solution,
            "solver_objective": self.solver_objective,
            "objective_is_bound": self.objective_is_bound,
            "validation": None if self.validation is None else self.validation.to_dict(),
            "notes": self.notes,
            "log": self.log,
            "sense": self.sense,
        }


#: every key of :meth:`SolveResult.to_dict` and what it holds (the formats page is generated
#: from this; a test keeps the two in step)
RESULT_KEYS: dict[str, str] = {
    "instance": "the instance's name",
    "model": "the formulation (`hetsched models`)",
    "solver": "the method that produced the result (`portfolio` for `--solver auto` on Hare_Sched)",
    "status": "`optimal`, `feasible`, `time_limit`, `infeasible` or `error`; a run stopped by "
    "its limit is never `optimal`",
    "objective": "the independent validator's recomputation of the solution's objective "
    "(`null` without a solution)",
    "bound": "the best proven bound on the optimum (below it when minimizing)",
    "gap": "/objective - bound/ / /objective/ (0 when both are 0)",
    "seconds": "wall time of the run, model building included",
    "solution": "the solution in its own format (a task schedule for Hare_Sched), or `null`",
    "solver_objective": "what the solver claimed, before validation",
    "objective_is_bound": "true for relaxations: `objective` is itself a bound of the problem",
    "validation": "the validator's report: `valid`, `objective`, `completion` (per job) and "
    "`violations` (each a `kind` and a `message` naming the constraint it breaks)",
    "notes": "what the run wants a reader to know (rounding of times, a method's refusal)",
    "log": "each method's outcome, in order (the portfolio's steps)",
    "sense": "`min` or `max`: the side on which `bound` lies",
}


def search_status(proven: bool, limited: bool) -> Status:
    """The status of a search that keeps an incumbent: optimal when its bound is proven to meet
    it, time_limit when the clock stopped it first, else feasible (a gap limit, or rounding)."""
    if proven:
        return Status.OPTIMAL
    return Status.TIME_LIMIT if limited else Status.FEASIBLE


def relative_gap(objective: float | None, bound: float | None, sense: str = "min") -> float | None:
    """|objective - bound| / |objective| (bound below the objective when minimizing, above when
    maximizing); 0 when both are 0."""
    if objective is None or bound is None:
        return None
    diff = max(0.0, objective - bound if sense == "min" else bound - objective)
    return 0.0 if diff == 0 else diff / max(abs(objective), 1e-12)
