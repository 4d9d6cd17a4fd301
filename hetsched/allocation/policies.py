"""The numbers of Gavel's allocation policies, recomputed from the allocation view by numpy:
the coefficients of the max-min LPs and the quantities of finish-time fairness. The
formulations in ``models/gavel``, the array-built fast path (:mod:`hetsched.allocate`) and the
validators share them."""

from __future__ import annotations

from typing import Callable

import numpy as np

from hetsched.allocation.problem import AllocationView, equal_share_makespan, equal_share_throughput
from hetsched.errors import HetschedError, InputError
from hetsched.instance.model import Instance

#: every policy ``hetsched.allocate.allocate`` takes
POLICIES = (
    "max-min-fairness",
    "max-min-fairness-perf",
    "makespan",
    "finish-time-fairness",
    "max-throughput",
    "max-throughput-cost",
)
#: the policies with a packed (space-sharing) formulation
PACKED_POLICIES = ("max-min-fairness-perf", "max-throughput")
#: the policies of the form max z s.t. z <= sum_r a_{j,r} x_{j,r} (the fast path takes them)
FAST_POLICIES = ("max-min-fairness", "max-min-fairness-perf", "makespan")


def max_min_coefficients(view: AllocationView, aware: bool) -> np.ndarray:
    """a_{j,r} such that the policy maximizes min_j sum_r a_{j,r} x_{j,r}."""
    if not aware:
        return np.tile((view.scale / view.weight)[:, None], (1, len(view.types)))
    return view.throughput * (view.scale / view.weight / equal_share_throughput(view))[:, None]


def coefficients(view: AllocationView, policy: str) -> np.ndarray:
    """a_{j,r} of the policy (Gavel Sec. 4.1; makespan as in models/gavel/makespan.py)."""
    if policy in ("max-min-fairness", "max-min-fairness-perf"):
        return max_min_coefficients(view, aware=policy == "max-min-fairness-perf")
    if policy == "makespan":  # zeta = M / makespan, scaled as in models/gavel/makespan.py
        if np.any(np.isnan(view.steps)):
            raise InputError(
                "instance", "$.jobs", "makespan needs epochs and iterations_per_epoch on every job"
            )
        return view.throughput * (equal_share_makespan(view) / view.steps)[:, None]
    raise HetschedError(f"no fast path for policy '{policy}' (it has: {', '.join(FAST_POLICIES)})")


def max_min_objective(aware: bool) -> Callable[[AllocationView, np.ndarray], float]:
    """min_j sum_r a_{j,r} x_{j,r} (Gavel Sec. 4.1), recomputed from an allocation."""

    def objective(view: AllocationView, x: np.ndarray) -> float:
        return float(np.min(np.sum(max_min_coefficients(view, aware) * x, axis=1)))

    return objective


def makespan(view: AllocationView, x: np.ndarray) -> float:
    """max_j steps_j / sum_r throughput_{j,r} x_{j,r} (Gavel Sec. 4.2), recomputed."""
    thr = np.sum(view.throughput * x, axis=1)
    return float(np.max(np.where(thr > 0, view.steps / np.where(thr > 0, thr, 1), np.inf)))


def fast_objective(policy: str) -> tuple[Callable[[AllocationView, np.ndarray], float], str]:
    """(the objective the validator recomputes, its sense) of a policy with a fast path; the
    same functions validate the policy's Pyomo formulation (``models/gavel``)."""
    if policy == "makespan":
        return makespan, "min"
    if policy in ("max-min-fairness", "max-min-fairness-perf"):
        return max_min_objective(policy == "max-min-fairness-perf"), "max"
    raise HetschedError(f"no fast path for policy '{policy}' (it has: {', '.join(FAST_POLICIES)})")


def waited(view: AllocationView, instance: Instance) -> np.ndarray:
    """t_j = max(0, now - a_j), ``now`` from the instance metadata (default 0: every t_j = 0)."""
    now = float(instance.metadata.get("now", 0.0)) if instance.metadata else 0.0
    return np.maximum(0.0, now - np.array([j.arrival for j in instance.jobs]))


def denominators(view: AllocationView, t: np.ndarray) -> np.ndarray:
    """D_j = t_j + R_j / thr_j(X^equal)."""
    if np.any(np.isnan(view.steps)):
        raise InputError(
            "instance",
            "$.jobs",
            "finish-time fairness needs epochs and iterations_per_epoch on every job",
        )
    return t + view.steps / equal_share_throughput(view)


def need(view: AllocationView, t: np.ndarray, rho: float) -> np.ndarray:
    slack = rho * denominators(view, t) - t
    return np.where(slack > 0, view.steps / np.where(slack > 0, slack, 1), np.inf)


def rho_max(instance: Instance):
    """max_j rho_j(X): the policy's objective, recomputed from the instance."""

    def objective(view: AllocationView, x: np.ndarray) -> float:
        t = waited(view, instance)
        thr = np.sum(view.throughput * x, axis=1)
        shared = np.where(thr > 0, t + view.steps / np.where(thr > 0, thr, 1), np.inf)
        return float(np.max(shared / denominators(view, t)))

    return objective
