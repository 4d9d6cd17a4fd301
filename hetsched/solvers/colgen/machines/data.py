"""The instance as P|Q|R || sum w_j C_j in integer ticks (van den Akker et al. 1999, Sec. 2).

Hare_Sched (HPDC'22, (4)-(8)) with every job one round (|R_n| = 1) of one task (|D_r| = 1) and a
common arrival a: task j trains on a GPU of class k for p_{j,k} = T^c ticks, which is all the
time it holds the GPU ((8) counts training only), and completes at C_j = T_j + s_{j,k}, where T_j
is the end of its training and s = T^s. GPUs with the same times for every job form a class of
m_k GPUs. Smith's rule holds on every GPU (the s_{j,k} term does not depend on the order), so an
optimal schedule runs each GPU's jobs in order of non-increasing w_j / p_{j,k}, without idle time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.indexed import JobsIndexed
from hetsched.core.scaling import exact_decimal_scale, instance_times
from hetsched.instance.model import Instance

MAX_TABLE_CELLS = 50_000_000  # jobs x horizon ticks of one pricing table (bytes of its decisions)


@dataclass(frozen=True)
class MachineProblem(JobsIndexed):
    """Jobs x GPU classes; every time in ticks of 1/``time_scale`` s, weights in 1/``weight_scale``."""

    job_ids: tuple[str, ...]
    class_gpus: tuple[tuple[str, ...], ...]  # the GPU ids of each class, in instance order
    p: np.ndarray  # (n, K) int64: training ticks p_{j,k}
    s: np.ndarray  # (n, K) int64: synchronization ticks s_{j,k}
    w: np.ndarray  # (n,) int64: weights in units
    release: int  # the common arrival a, in ticks
    time_scale: int
    weight_scale: int
    horizon: (
        np.ndarray
    )  # (K,) int64: no GPU of class k is busy after this tick in an optimal schedule

    @property
    def n_classes(self) -> int:
        return len(self.class_gpus)

    @property
    def machines(self) -> np.ndarray:
        """m_k: the GPUs of each class."""
        return np.array([len(g) for g in self.class_gpus], dtype=np.int64)

    @property
    def divisor(self) -> int:
        """An objective in units divided by this is in the instance's (weight x seconds)."""
        return self.time_scale * self.weight_scale

    def cost(self, k: int, jobs: np.ndarray, ends: np.ndarray) -> int:
        """sum_j w_j C_j in units of ``jobs`` ending their training at ticks ``ends`` on class k."""
        return int(np.dot(self.w[jobs], self.release + ends + self.s[jobs, k]))

    def smith_order(self, k: int) -> np.ndarray:
        """Jobs in order of non-increasing w_j / p_{j,k} (ties by index): Smith's rule on class k."""
        return np.array(
            sorted(range(self.n_jobs), key=lambda j: (-self.w[j] / self.p[j, k], j)), dtype=np.int64
        )


def unsupported_reason(instance: Instance) -> str | None:
    """Why the machine-schedule method does not apply to ``instance`` (None: it does)."""
    return _checked(instance)[1]


def machine_problem(instance: Instance) -> MachineProblem:
    """The instance as P|Q|R || sum w_j C_j; ValueError with the reason if it is not one."""
    prob, reason = _checked(instance)
    if prob is None:
        raise ValueError(reason)
    return prob


def _checked(instance: Instance) -> tuple[MachineProblem | None, str | None]:
    """(the problem, None), or (None, why the method does not apply): checked and built once."""
    jobs = instance.jobs
    if not jobs:
        return None, "the instance has no jobs"
    multi = next((j for j in jobs if j.rounds != 1 or j.tasks_per_round != 1), None)
    if multi is not None:
        return None, (
            f"job {multi.id} has {multi.rounds} rounds of {multi.tasks_per_round} tasks; machine "
            "schedules take one round of one task per job"
        )
    if len({j.arrival for j in jobs}) > 1:
        return None, "the jobs arrive at different times; machine schedules take a common arrival"
    times = instance_times(instance)
    ts = exact_decimal_scale(times, max_digits=4)
    if ts is None:
        return None, "times need at most 4 decimal digits"
    ws = exact_decimal_scale([j.weight for j in jobs], max_digits=6)
    if ws is None:
        return None, "weights need at most 6 decimal digits"
    # objectives are sums of w x ticks in float64: keep them exact integers (< 2^53)
    if len(jobs) * max(j.weight for j in jobs) * ws * sum(times) * ts >= 2.0**53:
        return (
            None,
            "the objective in integer units would exceed 2^53 (times or weights too large to stay exact)",
        )
    prob = _build(instance, ts, ws)
    cells = int(prob.n_jobs * (prob.horizon.max() + 1))
    if cells > MAX_TABLE_CELLS:
        return (
            None,
            f"a pricing table would hold {cells} cells (jobs x horizon ticks; limit {MAX_TABLE_CELLS})",
        )
    return prob, None


def _build(instance: Instance, ts: int, ws: int) -> MachineProblem:
    jobs, gpus = instance.jobs, instance.gpus
    classes: dict[tuple, list[str]] = {}
    for g in gpus:
        key = tuple((instance.train_time(j.id, g.id), instance.sync_time(j.id, g.id)) for j in jobs)
        classes.setdefault(key, []).append(g.id)
    keys = list(classes)
    p = np.array(
        [[round(key[j][0] * ts) for key in keys] for j in range(len(jobs))], dtype=np.int64
    )
    s = np.array(
        [[round(key[j][1] * ts) for key in keys] for j in range(len(jobs))], dtype=np.int64
    )
    w = np.array([round(j.weight * ws) for j in jobs], dtype=np.int64)
    m = np.array([len(classes[k]) for k in keys])
    # A GPU never runs past the sum of the times of the jobs that could be on it; with one class of
    # m identical GPUs, no GPU of an optimal schedule ends after sum p / m + (m - 1) / m max p
    # (van den Akker et al. 1999, Sec. 2): a later last job could move to the least loaded GPU.
    horizon = p.sum(axis=0)
    if len(keys) == 1:
        pj = p[:, 0]
        horizon = np.minimum(horizon, (pj.sum() + (m[0] - 1) * pj.max()) // m[0])
    return MachineProblem(
        tuple(j.id for j in jobs),
        tuple(tuple(classes[k]) for k in keys),
        p,
        s,
        w,
        round(jobs[0].arrival * ts),
        ts,
        ws,
        horizon.astype(np.int64),
    )
