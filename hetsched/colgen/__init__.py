"""Column generation (Dantzig-Wolfe) for formulations of kind ``colgen``."""

from hetsched.colgen.master import ColgenStats, solve_colgen
from hetsched.colgen.problem import Column, DantzigWolfeProblem

__all__ = ["Column", "ColgenStats", "DantzigWolfeProblem", "solve_colgen"]
