"""Interference-aware job placement (Harmony, ToN'22): the problem and its speed model, the
baselines, the exact optimum (``models/harmony_placement.py`` and enumeration), a learned
interference predictor, and an interval simulator."""

from hetsched.harmony.problem import (
    Placement,
    PlacementView,
    check_placement,
    placement_from_dict,
    placement_view,
)

__all__ = ["Placement", "PlacementView", "check_placement", "placement_from_dict", "placement_view"]
