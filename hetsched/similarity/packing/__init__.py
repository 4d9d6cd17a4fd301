"""Job packing for the model-similarity policy (AppSci'24, Algorithm 3) and its exact optimum."""

from hetsched.similarity.packing.algorithms import check_packing, greedy_packing, optimal_packing
from hetsched.similarity.packing.problem import Packing, PackingView, packing_view

__all__ = [
    "Packing",
    "PackingView",
    "check_packing",
    "greedy_packing",
    "optimal_packing",
    "packing_view",
]
