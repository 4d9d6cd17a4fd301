"""Column generation (Dantzig-Wolfe) for formulations of kind ``colgen``."""

from hetsched.solvers.colgen.master import ColgenSolution, ColgenStats, lp_relaxation, solve_colgen
from hetsched.solvers.colgen.problem import Column, DantzigWolfeProblem

__all__ = [
    "Column",
    "ColgenSolution",
    "ColgenStats",
    "DantzigWolfeProblem",
    "lp_relaxation",
    "solve_colgen",
]
