"""The reference-job database and model similarity of the AppSci'24 policy (Sec. 4.1, Algorithm 1).

Reference jobs are the rows of Gavel's measured table (``simulation_throughputs.json``): one
per (model, batch size), with its throughput (iterations/s) on each GPU type at each GPU count
it was measured at (1, 2, 4, 8). A job is a vector of model characteristics; similarity is the
cosine of the angle between two vectors (Sec. 4.1):

    similarity(j, fj) = (j . fj) / (||j|| ||fj||)

What the paper leaves open, decided here (and stated, since the table has no model data):
* **Characteristics**: number of layers, parameters (millions) and batch size, each taken as
  log2(1 + x) so that a batch size of 8192 does not drown the others in the cosine.
* **Layers and parameters** of Gavel's models are approximate public figures for those
  architectures (:data:`MODEL_FEATURES`), assumed, not measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from hetsched.core.errors import InputError
from hetsched.instance.gavel_table import parse_row

# (layers, parameters in millions): approximate public figures, assumed (see the module docstring)
MODEL_FEATURES: dict[str, tuple[float, float]] = {
    "ResNet-18": (18, 11.7),
    "ResNet-50": (50, 25.6),
    "Transformer": (12, 65.0),
    "LM": (2, 28.0),
    "Recommendation": (3, 6.0),
    "A3C": (4, 1.0),
    "CycleGAN": (24, 11.4),
}


@dataclass(frozen=True)
class ReferenceJob:
    name: str  # the table row, e.g. "ResNet-50 (batch size 64)"
    family: str
    batch_size: int
    features: tuple[float, float, float]  # layers, parameters (M), batch size
    throughput: dict[tuple[str, int], float] = field(
        default_factory=dict, compare=False
    )  # (type, GPUs) -> it/s

    def vector(self) -> np.ndarray:
        return feature_vector(self.features)


def feature_vector(features) -> np.ndarray:
    return np.log2(1.0 + np.asarray(features, dtype=float))


def cosine_similarity(a, b) -> float:
    """Sec. 4.1: cos(theta) = a . b / (||a|| ||b||) of two feature vectors (already transformed)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        raise InputError("similarity", "features", "a job's characteristics are all zero")
    return float(a @ b / (na * nb))


def row_features(name: str) -> tuple[float, float, float]:
    family, bs = parse_row(name)
    if family not in MODEL_FEATURES:
        raise InputError(
            "reference database", "model", f"no characteristics for model family '{family}'"
        )
    layers, params = MODEL_FEATURES[family]
    return float(layers), float(params), float(bs)


@dataclass(frozen=True)
class ReferenceDB:
    jobs: tuple[ReferenceJob, ...]

    def closest(self, features, exclude: str | None = None) -> tuple[ReferenceJob, float]:
        """Algorithm 1: the similarity of the job to every reference job; the most similar one
        (ties: the first in name order). ``exclude`` leaves one reference out (an unseen model)."""
        v = feature_vector(features)
        best = None
        for ref in self.jobs:
            if ref.name == exclude:
                continue
            s = cosine_similarity(v, ref.vector())
            if best is None or s > best[1] + 1e-15:
                best = (ref, s)
        if best is None:
            raise InputError("reference database", "jobs", "empty")
        return best

    def get(self, name: str) -> ReferenceJob:
        for ref in self.jobs:
            if ref.name == name:
                return ref
        raise InputError("reference database", "model", f"no reference job '{name}'")


@lru_cache(maxsize=2)
def gavel_reference_db(
    path: str | None = None, types: tuple[str, ...] = ("k80", "p100", "v100")
) -> ReferenceDB:
    """Every row of Gavel's table as a reference job."""
    from hetsched.similarity.packing.problem import _table

    table = _table(path)
    rows: dict[str, dict[tuple[str, int], float]] = {}
    for t in types:
        for (model, scale), thr in table.isolated[t].items():
            if thr > 0:
                rows.setdefault(model, {})[(t, scale)] = float(thr)
    jobs = []
    for name in sorted(rows):
        family, bs = parse_row(name)
        jobs.append(ReferenceJob(name, family, bs, row_features(name), rows[name]))
    return ReferenceDB(tuple(jobs))
