"""The data of a heterogeneity-aware allocation problem, read from an instance.

Job j: throughput T_{j,r} on GPU type r (steps/s of the whole job with its s_j workers, the
``throughput`` field), scale factor s_j (``requested_workers``, default 1), priority weight w_j
(``weight``), steps remaining R_j (``epochs`` x ``iterations_per_epoch`` when given). Type r has
N_r GPUs and an hourly cost c_r (``cost_per_hour``). The base constraints of every policy
(Gavel OSDI'20, Sec. 3.1):

    x_{j,r} >= 0,   sum_r x_{j,r} <= 1  (a job runs at most all the time),
    sum_j s_j x_{j,r} <= N_r            (a type's GPUs are not oversubscribed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsched.core.errors import InputError
from hetsched.instance.model import Instance, throughput_row


@dataclass(frozen=True)
class AllocationView:
    job_ids: tuple[str, ...]
    types: tuple[str, ...]
    count: np.ndarray  # N_r
    throughput: np.ndarray  # T[j, r]
    scale: np.ndarray  # s_j
    weight: np.ndarray  # w_j
    steps: np.ndarray  # R_j (nan when unknown)
    cost: np.ndarray  # c_r per GPU-hour (nan when unknown)

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)


def allocation_view(instance: Instance) -> AllocationView:
    """Read the allocation data; a job without a throughput for some GPU type is an input error."""
    counts: dict[str, int] = {}
    for g in instance.gpus:
        counts[g.type] = counts.get(g.type, 0) + 1
    types = tuple(sorted(counts))
    try:
        rows = [[job.throughput[t] for t in types] for job in instance.jobs]
    except KeyError:  # the first job missing a type says which, in the one shared message
        for j in range(len(instance.jobs)):
            throughput_row(instance, j, types)
        raise
    thr = np.array(rows, dtype=float).reshape(len(instance.jobs), len(types))
    never = np.flatnonzero(~np.any(thr > 0, axis=1))
    if len(never):
        raise InputError(
            instance.name,
            f"$.jobs[{int(never[0])}].throughput",
            "zero on every GPU type: the job can never run",
        )
    steps = np.array(
        [
            j.epochs * j.iterations_per_epoch if j.epochs and j.iterations_per_epoch else np.nan
            for j in instance.jobs
        ]
    )
    cost = np.array(
        [instance.cluster.gpu_types[t].cost_per_hour or np.nan for t in types], dtype=float
    )
    return AllocationView(
        job_ids=tuple(j.id for j in instance.jobs),
        types=types,
        count=np.array([counts[t] for t in types], dtype=float),
        throughput=thr,
        scale=np.array([j.requested_workers or 1 for j in instance.jobs], dtype=float),
        weight=np.array([j.weight for j in instance.jobs]),
        steps=steps,
        cost=cost,
    )


def equal_share(view: AllocationView) -> np.ndarray:
    """X^equal (Gavel Sec. 4.1): every job gets the same share f of every type's time, split in
    proportion to the type counts: x_{j,r} = f N_r / sum N, f = min(1, sum_r N_r / sum_j s_j).
    It satisfies the base constraints; thr_j(X^equal) normalizes the heterogeneity-aware policies."""
    return np.broadcast_to(equal_share_row(view), (view.n_jobs, len(view.count)))


def equal_share_row(view: AllocationView) -> np.ndarray:
    """Every job's row of X^equal: f N_r / sum N."""
    from hetsched.gavel.share_kernels import equal_share_row as row  # numba: when it is used

    return row(view.count, view.scale)


def effective_throughput(view: AllocationView, x: np.ndarray) -> np.ndarray:
    """thr_j(X) = sum_r T_{j,r} x_{j,r} (Gavel's effective throughput)."""
    return np.sum(view.throughput * x, axis=1)


def share_throughput(view: AllocationView, row: np.ndarray) -> np.ndarray:
    """thr_j(X) where every job gets the same shares ``row``: :func:`effective_throughput` of
    the broadcast row to the bit, in one compiled pass (a simulated Gavel normalizes at every
    change of its active jobs)."""
    from hetsched.core.summation import weighted_row_sums  # numba: when it is used

    return weighted_row_sums(view.throughput, row)


def equal_share_throughput(view: AllocationView) -> np.ndarray:
    """thr_j(X^equal): what the heterogeneity-aware policies normalize by (> 0 for every job)."""
    return share_throughput(view, equal_share_row(view))


def equal_share_makespan(view: AllocationView) -> float:
    """M = max_j R_j / thr_j(X^equal): a feasible makespan, the unit of the makespan LP."""
    return float(np.max(view.steps / equal_share_throughput(view)))


@dataclass(frozen=True)
class Allocation:
    """x[j, r] for a policy, with the view it refers to."""

    policy: str
    view: AllocationView
    x: np.ndarray
    instance: str = ""
    params: dict = field(default_factory=dict)  # the policy's parameters (e.g. the rho of a test)

    def throughput(self) -> np.ndarray:
        """thr_j(X), per job."""
        return effective_throughput(self.view, self.x)

    def rows(self) -> list[tuple[str, dict[str, float]]]:
        """(job, its share of each type) for every job."""
        v = self.view
        return [
            (j, {t: float(self.x[a, b]) for b, t in enumerate(v.types)})
            for a, j in enumerate(v.job_ids)
        ]

    def to_dict(self) -> dict[str, Any]:
        v = self.view
        return {
            "format": "hetsched.gavel/1",
            "policy": self.policy,
            "instance": self.instance,
            "allocation": {
                j: {t: float(self.x[a, b]) for b, t in enumerate(v.types)}
                for a, j in enumerate(v.job_ids)
            },
            "effective_throughput": dict(zip(v.job_ids, effective_throughput(v, self.x).tolist())),
        }
