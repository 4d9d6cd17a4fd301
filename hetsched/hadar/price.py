"""Hadar's utilities and the exponential price function (5)-(8).

Utility U_j(d) of a job finishing with JCT d seconds: :mod:`hetsched.hadar.utility`.

Price of type-r GPUs on machine h with gamma of its c_h^r GPUs allocated (5):
    k(gamma) = U_min^r (U_max^r / U_min^r)^(gamma / c_h^r)
with (6) U_max^r = max_j U_j(t_j^min) / w_j^r, (7) U_min^r = 1/(4 eta) min_j U_j(T - a_j) / (t_j^max sum_r w_j^r),
(8) t_j^min = N_j E_j / (M_j max_r X_j^r), t_j^max = N_j E_j / (M_j min_r X_j^r).

Ambiguities, resolved here:
* w_j^r (a per-type demand, unknown before allocation) is taken as W_j, the job's gang size;
  then U_max^r and U_min^r are the same for every type r.
* M_j is undefined in the paper; it is the number of GPUs whose throughputs add up: W_j under
  per-worker progress (1a), 1 under bottleneck progress. t^min, t^max are durations in seconds.
* "U_j(t_j^min - a_j)" subtracts an arrival from a duration; we read it as the utility of the
  fastest possible JCT, U_j(t_j^min), and "U_j(T - a_j)" as the utility of ending at the horizon,
  JCT (T - a_j + 1) L.
* min_r X_j^r is taken over types with X > 0 (a type a job cannot use does not bound t^max).
* eta (the scaling factor of the initial dual) defaults to 1. The proof of Theorem 2 asks for
  1/eta <= t_j^max sum_r w_j^r / sum_h sum_r c_h^r for every job: :func:`eta_from_proof` is the
  smallest eta meeting that (t^max in seconds, as in (8)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hetsched.hadar.arrays import HadarView
from hetsched.hadar.utility import utilities


def durations(view: HadarView, jobs: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(t^min_j, t^max_j) in seconds, eq. (8), for ``jobs`` in their order (default: all); the
    online algorithm asks for the active jobs only, so a slot costs them, not the whole trace."""
    idx = np.arange(view.n_jobs) if jobs is None else np.asarray(jobs, dtype=np.int64)
    thr = view.throughput[idx]
    m = view.workers[idx] if view.progress == "per-worker" else np.ones(len(idx))
    fastest = thr.max(axis=1)
    slowest = np.where(thr > 0, thr, np.inf).min(axis=1)  # over the types the job can use
    work = view.work[idx]
    return work / (m * fastest), work / (m * slowest)


@dataclass(frozen=True)
class PriceFunction:
    u_max: float  # U_max^r (the same for every r, see the module docstring)
    u_min: float  # U_min^r

    def price(self, allocated: float, capacity: float) -> float:
        """k(gamma) of (5)."""
        return self.u_min * (self.u_max / self.u_min) ** (allocated / capacity)

    @property
    def alpha(self) -> float:
        """alpha = max(1, ln(U_max / U_min)) of Theorem 2."""
        return max(1.0, math.log(self.u_max / self.u_min))


def price_terms(
    view: HadarView, jobs: np.ndarray | None = None, utility_name: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each job's term of (6), U_j(t_j^min) / W_j, and of (7) before its 1 / (4 eta),
    U_j(T - a_j) / (t_j^max W_j), for ``jobs`` in their order (default: all). They do not
    change from slot to slot, so an online run works them out once per job
    (:class:`hetsched.hadar.job_table.JobTable`)."""
    js = np.arange(view.n_jobs) if jobs is None else np.asarray(jobs, dtype=np.int64)
    t_min, t_max = durations(view, js)
    # elementwise, the arithmetic of utility() and view.jct() job by job (the same floats)
    workers = view.workers[js]
    u_max = utilities(view, utility_name, js, t_min) / workers
    at_horizon = (view.horizon - view.arrival[js] + view.jct_offset).astype(
        float
    ) * view.slot_seconds
    return u_max, utilities(view, utility_name, js, at_horizon) / (t_max * workers)


def price_function(
    view: HadarView,
    jobs: list[int] | None = None,
    utility_name: str | None = None,
    eta: float = 1.0,
) -> PriceFunction:
    """(6)-(8) over ``jobs`` (default: all; the online algorithm uses the current workload)."""
    return prices_of_terms(*price_terms(view, jobs, utility_name), eta)


def prices_of_terms(u_max_terms: np.ndarray, u_min_terms: np.ndarray, eta: float) -> PriceFunction:
    """(6)-(7) from the jobs' terms (:func:`price_terms`): their largest and smallest."""
    return PriceFunction(float(np.max(u_max_terms)), float(np.min(u_min_terms) / (4 * eta)))


def eta_from_proof(view: HadarView) -> float:
    """The smallest eta with 1/eta <= t_j^max W_j / sum_h sum_r c_h^r for all j (proof of Theorem 2)."""
    _, t_max = durations(view)
    return float(max(view.capacity.sum() / (t_max * view.workers)))
