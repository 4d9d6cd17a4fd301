"""The model-similarity round-based policy (AppSci'24): reference database, cosine similarity
(Algorithm 1), one round of Algorithm 2 and its exact counterpart."""

from hetsched.similarity.reference import ReferenceDB, cosine_similarity, gavel_reference_db
from hetsched.similarity.round import (
    VARIANTS,
    Option,
    RoundView,
    check_round,
    greedy_round,
    round_view,
)

__all__ = [
    "VARIANTS",
    "Option",
    "ReferenceDB",
    "RoundView",
    "check_round",
    "cosine_similarity",
    "gavel_reference_db",
    "greedy_round",
    "round_view",
]
