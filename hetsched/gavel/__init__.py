"""Gavel-style allocations (Narayanan et al., OSDI 2020): x_{j,r}, the fraction of time job j
runs on GPU type r with its s_j workers."""

from hetsched.gavel.problem import Allocation, AllocationView, allocation_view, equal_share
from hetsched.gavel.validate import allocation_report, check_allocation

__all__ = [
    "Allocation",
    "AllocationView",
    "allocation_view",
    "allocation_report",
    "check_allocation",
    "equal_share",
]
