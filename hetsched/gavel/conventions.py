"""Two conventions for the numbers of Gavel's allocation policies.

The policies (Gavel OSDI'20 Sec. 4) normalize throughputs so that different models can be
compared; the paper leaves the normalizers loose, and hetsched and Gavel's own code
(``scheduler/policies/*.py``, read for this module; no code copied) chose differently:

=========================  ==========================================  ==========================================
quantity                   ``hetsched`` (the default)                  ``gavel`` (Gavel's code)
=========================  ==========================================  ==========================================
max-min perf normalizer    thr_j(X^equal), X^equal = f N_r / sum N,    thr_j(X^prop), X^prop = N_r / sum N
                           f = min(1, sum N / sum_j s_j)               (``ProportionalPolicy``: no f)
max-throughput objective   sum_j thr_j(X) / thr_j(X^equal)             sum_j thr_j(X) (raw steps/s)
... per dollar             [sum_j thr_j / thr_j(X^equal)] /            sum_{j,r} T_{j,r} x_{j,r} / c_r
                           [sum c_r s_j x_{j,r}] (a ratio)             (linear)
FTF rho_j                  (t_j + R_j/thr_j(X)) /                      (t_j + R_j/thr_j(X)) /
                           (t_j + R_j/thr_j(X^equal))                  (I_j + R_j/thr_j(X^iso)), I_j = 0
                                                                       on a first allocation
FTF isolated share         X^equal                                     x_{j,r} = N_r / (n s_j), the row scaled
                                                                       down to sum 1 (``IsolatedPolicy``)
=========================  ==========================================  ==========================================

Agnostic max-min fairness and makespan (Gavel's ``min_total_duration_perf``) are the same in
both. Gavel's agnostic ``min_total_duration`` and ``finish_time_fairness`` run the perf policy
with every type's throughput replaced by the job's throughput on one reference type (its code
hard-codes ``v100``; where some job cannot run on a V100 we take the first type every job runs
on): :func:`agnostic_view`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hetsched.core.errors import InputError
from hetsched.gavel.problem import (
    AllocationView,
    effective_throughput,
    equal_share,
    equal_share_row,
    share_throughput,
)

CONVENTIONS = ("hetsched", "gavel")
#: the type Gavel's agnostic policies read every job's throughput from
GAVEL_REFERENCE_TYPE = "v100"


def check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise InputError(
            "allocate", "--convention", f"one of {', '.join(CONVENTIONS)}, not {convention!r}"
        )
    return convention


def proportional_share(view: AllocationView) -> np.ndarray:
    """X^prop: every job gets x_{j,r} = N_r / sum N (Gavel's ``ProportionalPolicy``)."""
    return np.tile(view.count / view.count.sum(), (view.n_jobs, 1))


def isolated_share(view: AllocationView) -> np.ndarray:
    """Gavel's ``IsolatedPolicy``: x_{j,r} = N_r / (n s_j), each row scaled down to sum <= 1."""
    x = view.count[None, :] / (view.n_jobs * view.scale[:, None])
    return x / np.maximum(1.0, x.sum(axis=1))[:, None]


def fair_throughput(view: AllocationView, convention: str) -> np.ndarray:
    """The max-min perf normalizer: thr_j(X^equal) (hetsched) or thr_j(X^prop) (gavel)."""
    return share_throughput(view, fair_share_row(view, convention))


def fair_share_row(view: AllocationView, convention: str) -> np.ndarray:
    """Every job's row of the allocation the max-min perf policy normalizes by: X^equal
    (hetsched) or X^prop (gavel, :func:`proportional_share`)."""
    return equal_share_row(view) if convention == "hetsched" else view.count / view.count.sum()


def isolated_throughput(view: AllocationView, convention: str) -> np.ndarray:
    """Finish-time fairness's isolated throughput: thr_j(X^equal) or thr_j(X^iso)."""
    x = equal_share(view) if convention == "hetsched" else isolated_share(view)
    return effective_throughput(view, x)


def reference_type(view: AllocationView, name: str | None = None) -> int:
    """The index of the reference type of the agnostic policies: ``name`` if given, else
    ``v100`` (Gavel's) when every job runs there, else the first type (sorted) on which every
    job runs. Every job needs a positive throughput on it."""
    runs_all = [r for r in range(len(view.types)) if np.all(view.throughput[:, r] > 0)]
    if name is None:
        if (
            GAVEL_REFERENCE_TYPE in view.types
            and view.types.index(GAVEL_REFERENCE_TYPE) in runs_all
        ):
            return view.types.index(GAVEL_REFERENCE_TYPE)
        if runs_all:
            return runs_all[0]
        raise InputError(
            "instance",
            "$.jobs[*].throughput",
            "the agnostic policies read every job's throughput on one reference type, "
            "and no GPU type runs every job",
        )
    if name not in view.types:
        raise InputError(
            "allocate", "reference_type", f"{name!r} is not a GPU type ({', '.join(view.types)})"
        )
    r = view.types.index(name)
    if r not in runs_all:
        j = int(np.flatnonzero(view.throughput[:, r] <= 0)[0])
        raise InputError(
            "instance",
            f"$.jobs[{j}].throughput.{name}",
            "zero on the agnostic policies' reference type",
        )
    return r


def agnostic_view(view: AllocationView, reference: str | None = None) -> AllocationView:
    """The view with T_{j,r} := T_{j,ref} on every type (Gavel's agnostic min_total_duration
    and finish_time_fairness)."""
    r = reference_type(view, reference)
    return replace(view, throughput=np.tile(view.throughput[:, [r]], (1, len(view.types))))
