"""Column generation (Dantzig-Wolfe) for formulations of kind ``colgen``."""

from hetsched.colgen.master import Column, ColgenStats, DantzigWolfeProblem, solve_colgen

__all__ = ["Column", "ColgenStats", "DantzigWolfeProblem", "solve_colgen"]
