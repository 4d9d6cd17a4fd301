"""Shared fixtures. Hypothesis profiles: 'ci' (default, fast) and 'deep' (HYPOTHESIS_PROFILE=deep)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "deep", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"


@pytest.fixture(scope="session")
def manifest() -> dict:
    return json.loads((INSTANCES / "manifest.json").read_text())["instances"]


def instance_path(name: str) -> Path:
    for sub in ("small", "paper", "audit", "allocation"):
        p = INSTANCES / sub / name
        if p.exists():
            return p
    raise FileNotFoundError(name)


def hadar_tiny_variant(seed: int):
    """instances/hadar/hadar_tiny.json with random epochs and throughputs (small enough to enumerate)."""
    import dataclasses

    import numpy as np

    from hetsched.instance.io import load_instance

    rng = np.random.default_rng(seed)
    base = load_instance(INSTANCES / "hadar" / "hadar_tiny.json")
    jobs = tuple(
        dataclasses.replace(
            j,
            epochs=float(rng.integers(4, 21)),
            throughput={t: float(rng.integers(2, 11)) for t in ("k80", "v100")},
        )
        for j in base.jobs
    )
    return dataclasses.replace(base, jobs=jobs)
