"""Solver backends. Each solver name maps to the kind of model it takes and an adapter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import hetsched.solvers._compat  # noqa: F401  (must come first)
from hetsched.solvers.cpsat import CpsatProblem, solve_cpsat
from hetsched.solvers.highs import solve_pyomo_highs
from hetsched.solvers.result import RawResult, SolveResult, Status, relative_gap


@dataclass(frozen=True)
class Backend:
    name: str  # solver name on the command line
    model_kind: str  # "pyomo" or "cpsat": which formulations it can solve
    solve: Callable[..., RawResult]


SOLVERS: dict[str, Backend] = {
    "highs": Backend("highs", "pyomo", solve_pyomo_highs),
    "cpsat": Backend("cpsat", "cpsat", solve_cpsat),
}

__all__ = ["SOLVERS", "Backend", "CpsatProblem", "RawResult", "SolveResult", "Status", "relative_gap"]
