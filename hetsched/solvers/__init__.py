"""Solver backends. Each solver name maps to the kind of model it takes and an adapter."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Callable

from hetsched.solvers.optional import OPTIONAL, is_available, optional_solve
from hetsched.solvers.result import RawResult, SolveResult, SolverOptions, Status, relative_gap


@dataclass(frozen=True)
class Backend:
    """A solver name and its adapter, imported on first use (``module:function``), so that
    listing the solvers loads neither Pyomo nor OR-Tools nor numba."""

    name: str  # solver name on the command line
    model_kind: str  # "pyomo", "cpsat", "colgen", "lp", ...: which formulations it can solve
    adapter: str | Callable[..., RawResult]  # "module:function", or the function itself
    # True: the backend keeps its own clock from the first step (CP-SAT, the column-generation
    # loops, HiGHS, which bounds its own hand-over); False: handing the model over (Pyomo writing
    # a file for an optional solver) is Python work without a clock, which ``solve`` bounds
    own_clock: bool = False

    @property
    def solve(self) -> Callable[..., RawResult]:
        if callable(self.adapter):
            return self.adapter
        module, _, function = self.adapter.partition(":")
        import_module("hetsched.solvers._compat")  # highspy before OR-Tools (see _compat)
        return getattr(import_module(module), function)


SOLVERS: dict[str, Backend] = {
    "highs": Backend("highs", "pyomo", f"{__name__}.highs:solve_pyomo_highs", own_clock=True),
    "cpsat": Backend("cpsat", "cpsat", f"{__name__}.cpsat:solve_cpsat", own_clock=True),
    # linear Pyomo models by Clarabel's interior point (a sparse KKT solve: dense columns stay
    # cheap, e.g. Gavel's max-min epigraph variable); what allocate --reference uses
    "clarabel": Backend(
        "clarabel", "pyomo", f"{__name__}.clarabel_lp:solve_pyomo_clarabel", own_clock=True
    ),
    # Dantzig-Wolfe column generation on HiGHS for formulations that price their columns
    "colgen": Backend("colgen", "colgen", f"{__name__}.colgen:solve_colgen", own_clock=True),
    # linear programs as arrays (hetsched.solvers.lp_arrays), no modelling layer
    "highs-lp": Backend("highs-lp", "lp", f"{__name__}.lp_arrays:solve_array_lp", own_clock=True),
    # branch-and-price over machine schedules (P|Q|R||sum w_j C_j cases of Hare_Sched)
    "bp": Backend(
        "bp", "machine-schedules", f"{__name__}.machine_bp:solve_machine_bp", own_clock=True
    ),
    # a formulation that runs several methods itself and reports the best of each
    "portfolio": Backend(
        "portfolio", "portfolio", f"{__name__}.portfolio:solve_portfolio", own_clock=True
    ),
    # depth-first branch and bound over dispatch orders (small Hare_Sched instances); its
    # formulation, like a portfolio, builds the method and keeps its own clock
    "dfs": Backend(
        "dfs", "dispatch-search", f"{__name__}.portfolio:solve_portfolio", own_clock=True
    ),
    # optional, found at run time (hetsched.solvers.optional): usable where installed
    **{name: Backend(name, "pyomo", optional_solve(name)) for name in OPTIONAL},
}


def available_solvers() -> list[str]:
    """The solvers this machine can run now: HiGHS and CP-SAT always, the optional ones if found."""
    return [name for name in SOLVERS if name not in OPTIONAL or is_available(name)]


__all__ = [
    "SOLVERS",
    "OPTIONAL",
    "available_solvers",
    "Backend",
    "RawResult",
    "SolveResult",
    "SolverOptions",
    "Status",
    "relative_gap",
]
