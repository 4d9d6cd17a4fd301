"""Hare (HPDC'22; TCC'24): the paper's view of an instance, its least-squares pricing,
task orderings, Algorithm 1 (list scheduling with the paper's GPU rule), local search, the
upper bounds the exact models start from, and the ``run_heuristic`` entry point."""
