"""The backend of kind ``portfolio``: a formulation that runs several methods itself. What it
builds is a :class:`Portfolio` (the run, a function of the solver options, and what it did);
the backend calls it and hands on its :class:`~hetsched.solvers.result.RawResult`, whose
``solution`` the formulation's ``extract`` returns for the independent validator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hetsched.solvers.result import RawResult, SolverOptions


@dataclass(frozen=True)
class Portfolio:
    """A method that keeps its own clock: ``run(options)`` -> its best result."""

    run: Callable[[SolverOptions], RawResult]


def solve_portfolio(problem: Portfolio, opts: SolverOptions = SolverOptions()) -> RawResult:
    """Run the portfolio within ``opts`` (its time limit covers every method it runs)."""
    return problem.run(opts)
