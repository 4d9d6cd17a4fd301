"""Shared fixtures. Hypothesis profiles: 'ci' (default, fast) and 'deep' (HYPOTHESIS_PROFILE=deep)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from support import MANIFEST

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


@pytest.fixture(scope="session")
def manifest() -> dict:
    return MANIFEST
