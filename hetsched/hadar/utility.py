"""Job utilities U_j(d) of Hadar's P1 (1), d the JCT in seconds; chosen per instance by
``metadata.hadar.utility`` (every Hadar component reads it from the view).

* ``effective-throughput`` (the paper's default): E_j N_j / d, iterations per second over the
  job's lifetime.
* ``reciprocal-jct``: 1 / d, so that maximizing total utility favours short JCTs (the JCT-based
  policy of "Expressing other scheduling policies" in a form the online algorithm can price).
* ``finish-time-fairness``: t_j^iso / d, the inverse of the finish-time fairness ratio of
  Themis/Gavel, t_j^iso the JCT with 1/J of the cluster: J times the job's run alone on its
  fastest gang (continuous time, not rounded to slots). Maximizing the *sum* is a proxy; the paper's min-max form
  min max_j d_j / t_j^iso is the offline model ``hadar-p1-ftf``, and makespan min max_j f_j is
  ``hadar-p1-makespan`` (neither is a sum of per-job utilities, so the online price function
  (6)-(7) does not apply to them).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hetsched.hadar.arrays import fastest_rate
from hetsched.instance.extensions import UTILITY_NAMES


def isolated_jct(view: Any, j: int) -> float:
    """t_j^iso (seconds): J x the time job j needs alone on its fastest gang of the cluster."""
    return view.n_jobs * float(view.work[j]) / fastest_rate(view, j) * view.slot_seconds


def _isolated(view: Any, j: Any) -> Any:
    """t_j^iso of job j, or of each job of an array of them."""
    if np.ndim(j) == 0:
        return isolated_jct(view, int(j))
    return np.array([isolated_jct(view, int(x)) for x in np.ravel(j)]).reshape(np.shape(j))


#: U_j(d) * d for a job j, or for each job of an array of them: every utility is this over d
#: (:func:`utility`; the compiled slot arrays divide it by the JCT: hetsched.hadar.progress_kernel)
NUMERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "effective-throughput": lambda view, j: view.work[j],
    "reciprocal-jct": lambda view, j: np.ones(np.shape(j)),
    "finish-time-fairness": _isolated,
}


assert tuple(NUMERATORS) == UTILITY_NAMES  # the names the view accepts are the ones defined here


def numerators(view: Any, name: str | None, jobs: np.ndarray) -> np.ndarray:
    """U_j(d) * d for each job of ``jobs`` (``name`` None: the instance's utility)."""
    jobs = np.asarray(jobs, dtype=np.int64)
    return np.asarray(NUMERATORS[name or view.utility](view, jobs), dtype=float)


def utility(view: Any, name: str | None, j: int, jct: float) -> float:
    """U_j(jct); ``name`` None means the instance's utility (``view.utility``)."""
    return float(NUMERATORS[name or view.utility](view, j) / jct)


def utilities(view: Any, name: str | None, jobs: np.ndarray, jct: np.ndarray) -> np.ndarray:
    """U_j(jct) elementwise over arrays of jobs and JCTs (broadcast), as :func:`utility`."""
    return np.asarray(NUMERATORS[name or view.utility](view, jobs) / jct, dtype=float)
