"""Greedy list scheduling of Hare's task set D (the engine of HPDC'22 Algorithm 1, lines 5-17).

Tasks are taken in a given order; each gets its available time t_i (the job's arrival for
round 0, else the end of training + sync of the previous round, line 10) and a GPU chosen
by a rule:

* ``earliest_available`` -- m* = argmin_m phi_m, as printed in Algorithm 1 (line 12), over the
  GPUs the task can run on (a train time of ``NEVER`` marks a type the job cannot use);
* ``earliest_finish``    -- the GPU on which the task finishes training + sync first.

phi_m is advanced by training time only (line 16): synchronization overlaps the next task.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.hare.view import HareView
from hetsched.instance.gavel_table import NEVER
from hetsched.schedule.model import TaskSchedule

MachineRule = Literal["earliest_available", "earliest_finish"]
MACHINE_RULES: tuple[str, ...] = ("earliest_available", "earliest_finish")


def check_precedence(view: HareView, order: np.ndarray) -> None:
    """Raise ValueError unless ``order`` is a permutation of D that puts every task of round r-1
    of a job before any task of its round r (line 10 reads all of round r-1)."""
    n_tasks = view.n_tasks
    if order.shape != (n_tasks,) or not np.array_equal(np.sort(order), np.arange(n_tasks)):
        raise ValueError(f"order must be a permutation of the {n_tasks} task indices")
    n_arr, r_arr, _ = view.task_arrays
    pos = np.empty(n_tasks, dtype=np.int64)
    pos[order] = np.arange(n_tasks)
    first_round = np.concatenate(([0], np.cumsum(view.rounds)[:-1]))
    rid = first_round[n_arr] + r_arr
    lo = np.full(int(np.sum(view.rounds)), n_tasks, dtype=np.int64)
    hi = np.full_like(lo, -1)
    np.minimum.at(lo, rid, pos)
    np.maximum.at(hi, rid, pos)
    later = np.flatnonzero(r_arr > 0)
    bad = later[lo[rid[later]] < hi[rid[later] - 1]]
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"order places a task of round {int(r_arr[i])} of job {view.job_ids[n_arr[i]]} "
            f"before all tasks of round {int(r_arr[i]) - 1}"
        )


def list_schedule(
    view: HareView,
    order: np.ndarray,
    rule: MachineRule = "earliest_available",
    instance_name: str = "",
    instance_hash: str = "",
) -> TaskSchedule:
    """Schedule the tasks in ``order`` (indices into D, as :func:`arrival_order` gives); every
    round of a job must come after its previous round."""
    start, gpu = schedule_in_order(view, np.asarray(order, dtype=np.int64), rule)
    return schedule_arrays(view, start, gpu, instance_name, instance_hash)


def schedule_in_order(
    view: HareView, order: np.ndarray, rule: str, compiled: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Lines 5-17 over tasks in ``order`` (indices into D, :attr:`HareView.task_arrays`); returns
    the start x~ and the GPU index of every task, in D order.

    The round-end table has one slot per job holding a_n (read by round 0) and one slot per
    round, so the branch of lines 7-10 is one lookup. The loop is compiled by numba
    (``compiled=False`` runs the same Python code interpreted).
    """
    if rule not in MACHINE_RULES:
        raise ValueError(f"unknown machine rule {rule!r} (choose from {', '.join(MACHINE_RULES)})")
    order = np.ascontiguousarray(order, dtype=np.int64)
    check_precedence(view, order)
    n_arr, r_arr, _ = view.task_arrays
    first_round = np.concatenate(([0], np.cumsum(view.rounds)[:-1]))
    slot = view.n_jobs + first_round[n_arr] + r_arr  # this task's round slot
    prev = np.where(r_arr == 0, n_arr, slot - 1)  # the slot holding t_i
    table = np.concatenate((view.arrival.astype(float), np.full(int(np.sum(view.rounds)), -np.inf)))
    start = np.empty(len(order))
    gpu = np.empty(len(order), dtype=np.int32)  # the schedule's own column type
    run = _earliest_available if rule == "earliest_available" else _earliest_finish
    if not compiled:  # the same loop run by the interpreter (a benchmark baseline)
        run = run.py_func
    run(
        order,
        n_arr,
        slot,
        prev,
        table,
        np.ascontiguousarray(view.train),
        np.ascontiguousarray(view.cycle),
        start,
        gpu,
    )
    return start, gpu


@kernel
def _earliest_available(
    order, job, slot, prev, table, train, cycle, start, gpu
):  # pragma: no cover - compiled
    """m* = argmin_m phi_m (ties: lowest m), kept in a binary heap of (phi_m, m); the argmin is
    over the GPUs the task can run on (train time below ``NEVER``) when there are any."""
    n_gpus = train.shape[1]
    key = np.zeros(n_gpus)
    ids = np.arange(n_gpus)
    for i in order:
        n = job[i]
        t = table[prev[i]]
        root = 0
        if train[n, ids[0]] >= NEVER:  # the earliest GPU cannot run it: the earliest that can
            best = -1
            for p in range(n_gpus):
                if train[n, ids[p]] < NEVER and (
                    best < 0 or key[p] < key[best] or (key[p] == key[best] and ids[p] < ids[best])
                ):
                    best = p
            if best >= 0:
                root = best
        m = ids[root]
        x = max(t, key[root])
        start[i] = x
        gpu[i] = m
        e = x + cycle[n, m]
        if e > table[slot[i]]:
            table[slot[i]] = e
        # replace that heap entry by (x + T^c, m), no smaller, and sift it down
        k, v, pos = x + train[n, m], m, root
        while True:
            c = 2 * pos + 1
            if c >= n_gpus:
                break
            if c + 1 < n_gpus and (
                key[c + 1] < key[c] or (key[c + 1] == key[c] and ids[c + 1] < ids[c])
            ):
                c += 1
            if key[c] < k or (key[c] == k and ids[c] < v):
                key[pos], ids[pos] = key[c], ids[c]
                pos = c
            else:
                break
        key[pos], ids[pos] = k, v


@kernel
def _earliest_finish(
    order, job, slot, prev, table, train, cycle, start, gpu
):  # pragma: no cover - compiled
    """The variant: m* = argmin_m max(t_i, phi_m) + T^c_{i,m} + T^s_{i,m} (ties: lowest m)."""
    n_gpus = train.shape[1]
    phi = np.zeros(n_gpus)
    for i in order:
        n = job[i]
        t = table[prev[i]]
        best, m = np.inf, 0
        for g in range(n_gpus):
            f = max(t, phi[g]) + cycle[n, g]
            if f < best:
                best, m = f, g
        x = max(t, phi[m])
        start[i] = x
        gpu[i] = m
        phi[m] = x + train[n, m]
        if best > table[slot[i]]:
            table[slot[i]] = best


def arrival_order(view: HareView) -> np.ndarray:
    """Tasks (indices into D) by their earliest possible start a_n + r * min cycle, ties by
    job, round, task (D order; the sort is stable)."""
    n, r, _ = view.task_arrays
    return np.argsort(view.arrival[n] + r * view.min_cycle[n], kind="stable")


def wspt_order(view: HareView) -> np.ndarray:
    """Whole jobs by weighted shortest processing time (Smith's ratio of least work to weight),
    arrivals first; a job's tasks in D order (round by round)."""
    work = view.rounds * view.tasks_per_round * view.train.min(axis=1)
    jobs = np.lexsort((np.arange(view.n_jobs), work / view.weight, view.arrival))
    sizes = (view.rounds * view.tasks_per_round)[jobs]
    first = np.repeat(view.task_offset[jobs], sizes)
    return first + np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def schedule_arrays(
    view: HareView,
    start: np.ndarray,
    gpu: np.ndarray,
    instance_name: str = "",
    instance_hash: str = "",
) -> TaskSchedule:
    """The schedule of starts and GPU indices in D order (:func:`schedule_in_order`): the view's
    task arrays are its columns, shared, not copied."""
    n_arr, r_arr, k_arr = view.task_arrays
    return TaskSchedule(
        view.job_ids, view.gpu_ids, n_arr, r_arr, k_arr, gpu, start, instance_name, instance_hash
    )


def completion_times(view: HareView, start: np.ndarray, gpu: np.ndarray) -> np.ndarray:
    """C_n = max over job n's tasks of x~_i + T^c + T^s (eq. (6) with equality), for starts and
    GPU indices in D order."""
    n = view.task_arrays[0]
    end = start + view.cycle[n, gpu]
    out = np.full(view.n_jobs, -np.inf)
    np.maximum.at(out, n, end)
    return out


def arrays_objective(view: HareView, start: np.ndarray, gpu: np.ndarray) -> float:
    """sum_n w_n C_n of starts and GPU indices in D order (what is reported of a schedule
    comes from the validator; this compares and claims)."""
    return float(np.dot(view.weight, completion_times(view, start, gpu)))
