"""Two lower bounds of Hare_Sched (4)-(8) in closed form, what the portfolio starts from: per
job (a job alone on the cluster) and over the cluster (Eastman, Even & Isaacs)."""

from __future__ import annotations

import numpy as np

from hetsched.hare.view import HareView, hare_view
from hetsched.instance.model import Instance


def job_bound(instance: Instance, view: HareView | None = None) -> float:
    """sum_n w_n (a_n + |R_n| L_n): every schedule's objective is at least this ((4), (6), (7))."""
    lower = (hare_view(instance) if view is None else view).completion_lower_bounds()
    return float(sum(j.weight * c for j, c in zip(instance.jobs, lower)))


def cluster_bound(instance: Instance, view: HareView | None = None) -> float:
    """Eastman, Even & Isaacs (Management Sci. 1964) on a relaxation of Hare_Sched: each task a job
    of its own with weight w_n / N_n (N_n = |R_n| |D_r| tasks, so sum_k w_n/N_n C_{n,k} <= w_n C_n),
    processing time min_m T^c_{n,m} on every GPU (identical machines, no arrivals, barriers or
    synchronization: each only adds). Their bound for P||sum w_j C_j,
    (1/M) sum_j w_j S_j + (M-1)/(2M) sum_j w_j p_j with S_j the WSPT prefix sums, is then a lower
    bound on every schedule's objective. The tasks of a job share one ratio, so they are summed
    in closed form: O(jobs log jobs)."""
    view = hare_view(instance) if view is None else view
    n_tasks = (view.rounds * view.tasks_per_round).astype(float)
    p = view.train.min(axis=1)  # the job's fastest training time on any GPU
    w = view.weight / n_tasks  # each task's share of its job's weight
    order = np.argsort(p / w, kind="stable")  # WSPT: p_j / w_j ascending
    p, w, n_tasks = p[order], w[order], n_tasks[order]
    before = np.concatenate(([0.0], np.cumsum(n_tasks * p)[:-1]))  # work of the jobs ahead
    # sum over a job's N tasks k = 1..N of w (before + k p) = w (N before + p N (N + 1) / 2)
    single = float(np.sum(w * (n_tasks * before + p * n_tasks * (n_tasks + 1) / 2)))
    m = float(view.n_gpus)
    return single / m + (m - 1) / (2 * m) * float(np.sum(w * n_tasks * p))
