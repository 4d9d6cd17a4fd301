"""The numbers of Gavel's allocation policies, recomputed from the allocation view by numpy:
the coefficients of the max-min LPs, the throughput sums and the quantities of finish-time
fairness, each under either convention (:mod:`hetsched.gavel.conventions`). The
formulations in ``models/gavel``, the array-built fast path (:mod:`hetsched.gavel.allocate`) and the
validators share them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from hetsched.core.errors import HetschedError, InputError
from hetsched.gavel.conventions import agnostic_view, fair_share_row, isolated_throughput
from hetsched.gavel.problem import (
    AllocationView,
    equal_share_row,
    equal_share_throughput,
)
from hetsched.instance.model import Instance


@dataclass(frozen=True)
class AllocationPolicy:
    """One of Gavel's allocation policies (Sec. 4) and what hetsched's routes know of it."""

    name: str
    #: ``max-min``: max z s.t. z <= sum_r a_{j,r} x_{j,r}; ``sum``: max sum_{j,r} a_{j,r} x_{j,r}
    #: (both taken by the array-built fast path; max-throughput-cost only under Gavel's
    #: convention, hetsched's is a ratio: Pyomo model); ``bisection``: finish-time fairness
    form: str
    packed: bool = False  # has a space-sharing formulation over job pairs
    agnostic: bool = False  # runs on the agnostic view (every type at the reference's throughput)


#: the one name table of the allocation policies ``hetsched.gavel.allocate.allocate`` takes
ALLOCATION_POLICIES: dict[str, AllocationPolicy] = {
    p.name: p
    for p in (
        AllocationPolicy("max-min-fairness", "max-min"),
        AllocationPolicy("max-min-fairness-perf", "max-min", packed=True),
        AllocationPolicy("makespan", "max-min"),
        AllocationPolicy("min-total-duration", "max-min", agnostic=True),
        AllocationPolicy("finish-time-fairness", "bisection"),
        AllocationPolicy("finish-time-fairness-agnostic", "bisection", agnostic=True),
        AllocationPolicy("max-throughput", "sum", packed=True),
        AllocationPolicy("max-throughput-cost", "sum"),
    )
}
# views of the table (never kept by hand)
POLICIES = tuple(ALLOCATION_POLICIES)
PACKED_POLICIES = tuple(n for n, p in ALLOCATION_POLICIES.items() if p.packed)
FAST_POLICIES = tuple(n for n, p in ALLOCATION_POLICIES.items() if p.form == "max-min")
SUM_POLICIES = tuple(n for n, p in ALLOCATION_POLICIES.items() if p.form == "sum")
AGNOSTIC_POLICIES = tuple(n for n, p in ALLOCATION_POLICIES.items() if p.agnostic)

Objective = Callable[[AllocationView, np.ndarray], float]


def policy_view(view: AllocationView, policy: str) -> AllocationView:
    """The view a policy optimizes over: the agnostic one for Gavel's agnostic
    ``min_total_duration`` and ``finish_time_fairness``, else ``view`` itself."""
    return agnostic_view(view) if policy in AGNOSTIC_POLICIES else view


def max_min_coefficients(
    view: AllocationView, aware: bool, convention: str = "hetsched"
) -> np.ndarray:
    """a_{j,r} such that the policy maximizes min_j sum_r a_{j,r} x_{j,r} (Gavel Sec. 4.1):
    s_j / w_j (agnostic), or T_{j,r} s_j / (w_j thr_j(X^fair)) with the convention's X^fair."""
    if not aware:
        return np.tile((view.scale / view.weight)[:, None], (1, len(view.types)))
    from hetsched.gavel.share_kernels import normalized_rows  # numba: when it is used

    row = fair_share_row(view, convention)  # thr_j(X^fair) = sum_r T_{j,r} row_r
    return normalized_rows(view.throughput, row, view.scale, view.weight)


def _steps(view: AllocationView, policy: str) -> np.ndarray:
    if np.any(np.isnan(view.steps)):
        raise InputError(
            "instance", "$.jobs", f"{policy} needs epochs and iterations_per_epoch on every job"
        )
    return view.steps


def coefficients(view: AllocationView, policy: str, convention: str = "hetsched") -> np.ndarray:
    """a_{j,r} of a policy of the max-z form (``FAST_POLICIES``; makespan as in
    models/gavel/makespan.py; min-total-duration is makespan on the agnostic view)."""
    if policy in ("max-min-fairness", "max-min-fairness-perf"):
        return max_min_coefficients(view, policy == "max-min-fairness-perf", convention)
    if policy in ("makespan", "min-total-duration"):  # zeta = M / makespan
        from hetsched.gavel.share_kernels import makespan_rows  # numba: when it is used

        v = policy_view(view, policy)  # a_{j,r} = T_{j,r} M / R_j, M: equal_share_makespan(v)
        return makespan_rows(v.throughput, equal_share_row(v), _steps(v, policy))
    raise HetschedError(f"no fast path for policy '{policy}' (it has: {', '.join(FAST_POLICIES)})")


def max_min_objective(aware: bool, convention: str = "hetsched") -> Objective:
    """min_j sum_r a_{j,r} x_{j,r} (Gavel Sec. 4.1), recomputed from an allocation."""

    def objective(view: AllocationView, x: np.ndarray) -> float:
        return float(np.min(np.sum(max_min_coefficients(view, aware, convention) * x, axis=1)))

    return objective


def makespan(view: AllocationView, x: np.ndarray) -> float:
    """max_j steps_j / sum_r throughput_{j,r} x_{j,r} (Gavel Sec. 4.2), recomputed."""
    thr = np.sum(view.throughput * x, axis=1)
    return float(np.max(np.where(thr > 0, view.steps / np.where(thr > 0, thr, 1), np.inf)))


def agnostic_makespan(view: AllocationView, x: np.ndarray) -> float:
    """Gavel's agnostic ``min_total_duration``: the makespan on the agnostic view."""
    return makespan(agnostic_view(view), x)


def fast_path(policy: str, convention: str = "hetsched") -> str | None:
    """Which array-built LP solves ``policy``: ``max-min`` (max z), ``sum`` (max sum a x), or
    None (no fast path: the Pyomo model)."""
    if policy in FAST_POLICIES:
        return "max-min"
    if policy == "max-throughput" or (policy == "max-throughput-cost" and convention == "gavel"):
        return "sum"
    return None


def sum_coefficients(view: AllocationView, policy: str, convention: str) -> np.ndarray:
    """a_{j,r} of a ``sum`` policy (:func:`fast_path`)."""
    if policy == "max-throughput-cost":
        if np.any(np.isnan(view.cost)):
            raise InputError(
                "instance",
                "$.cluster.gpu_types",
                "cost-normalized throughput needs cost_per_hour on every type",
            )
        return view.throughput / view.cost[None, :]
    return throughput_coefficients(view, convention)


def fast_objective(policy: str, convention: str = "hetsched") -> tuple[Objective, str]:
    """(the objective the validator recomputes, its sense) of a policy with a fast path; the
    same functions validate the policy's Pyomo formulation (``models/gavel``)."""
    if policy == "max-throughput":
        return total_throughput(convention), "max"
    if policy == "max-throughput-cost":
        return throughput_per_dollar(convention), "max"
    if policy == "makespan":
        return makespan, "min"
    if policy == "min-total-duration":
        return agnostic_makespan, "min"
    if policy in ("max-min-fairness", "max-min-fairness-perf"):
        return max_min_objective(policy == "max-min-fairness-perf", convention), "max"
    raise HetschedError(f"no fast path for policy '{policy}' (it has: {', '.join(FAST_POLICIES)})")


def throughput_coefficients(view: AllocationView, convention: str = "hetsched") -> np.ndarray:
    """a_{j,r} of max sum a x (Gavel Sec. 4.2): T_{j,r} / thr_j(X^equal), or Gavel's raw T_{j,r}."""
    if convention == "gavel":
        return view.throughput
    return view.throughput / equal_share_throughput(view)[:, None]


def total_throughput(convention: str = "hetsched") -> Objective:
    """sum_{j,r} a_{j,r} x_{j,r} with the convention's a (:func:`throughput_coefficients`)."""

    def objective(view: AllocationView, x: np.ndarray) -> float:
        return float(np.sum(throughput_coefficients(view, convention) * x))

    return objective


def throughput_per_dollar(convention: str = "hetsched") -> Objective:
    """hetsched: total normalized throughput / total spend sum c_r s_j x_{j,r} (a ratio);
    gavel: sum_{j,r} T_{j,r} x_{j,r} / c_r (``ThroughputNormalizedByCostSumWithPerf``)."""

    def objective(view: AllocationView, x: np.ndarray) -> float:
        if convention == "gavel":
            return float(np.sum(view.throughput / view.cost[None, :] * x))
        spend = float(np.sum(view.cost[None, :] * view.scale[:, None] * x))
        return float(np.sum(throughput_coefficients(view) * x)) / spend if spend > 0 else 0.0

    return objective


def waited(view: AllocationView, instance: Instance) -> np.ndarray:
    """t_j = max(0, now - a_j), ``now`` from the instance metadata (default 0: every t_j = 0)."""
    now = float(instance.metadata.get("now", 0.0)) if instance.metadata else 0.0
    return np.maximum(0.0, now - np.array([j.arrival for j in instance.jobs]))


def denominators(
    view: AllocationView, t: np.ndarray, convention: str = "hetsched", isolated=None
) -> np.ndarray:
    """D_j, the finish time rho_j compares against: t_j + R_j / thr_j(X^equal) (hetsched), or
    I_j + R_j / thr_j(X^iso) (gavel), I_j (``isolated``) the isolated time accumulated by
    earlier rounds: 0 for a one-shot allocation."""
    steps = _steps(view, "finish-time fairness")
    if convention == "hetsched":
        base = t
    else:
        base = np.zeros_like(t) if isolated is None else np.asarray(isolated, dtype=float)
    return base + steps / isolated_throughput(view, convention)


def need(
    view: AllocationView, t: np.ndarray, rho: float, convention: str = "hetsched", isolated=None
):
    """need_j(rho) = R_j / (rho D_j - t_j): the throughput that makes rho_j <= rho (inf if none)."""
    return need_given(view.steps, denominators(view, t, convention, isolated), t, rho)


def need_given(steps: np.ndarray, d: np.ndarray, t: np.ndarray, rho: float) -> np.ndarray:
    """:func:`need` with the denominators D_j (``d``) given: a bisection's tests share them."""
    slack = rho * d - t
    return np.where(slack > 0, steps / np.where(slack > 0, slack, 1), np.inf)


def rho_max(instance: Instance, convention: str = "hetsched", policy: str = "") -> Objective:
    """max_j rho_j(X): the finish-time fairness objective, recomputed from the instance."""

    def objective(view: AllocationView, x: np.ndarray) -> float:
        v = policy_view(view, policy)
        t = waited(v, instance)
        return attained_rho(v, t, denominators(v, t, convention), x)

    return objective


def attained_rho(view: AllocationView, t: np.ndarray, d: np.ndarray, x: np.ndarray) -> float:
    """max_j rho_j(x) = max_j (t_j + R_j / thr_j(x)) / D_j (``d``: the D_j), the rho that the
    allocation ``x`` attains (inf if a job gets no throughput)."""
    thr = np.sum(view.throughput * x, axis=1)
    shared = np.where(thr > 0, t + view.steps / np.where(thr > 0, thr, 1), np.inf)
    return float(np.max(shared / d))
