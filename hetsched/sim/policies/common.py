"""Helpers shared by the task-level policies."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hetsched.hare.view import HareView
from hetsched.instance.gavel_table import NEVER
from hetsched.sim.engine import SimState


def task_time(state: SimState, n: int) -> np.ndarray:
    """T^c + T^s of job n's task on every GPU."""
    return state.view.train[n] + state.view.sync[n]


def fill_fastest(
    state: SimState, order: Iterable[int], free: list[int] | None = None
) -> list[tuple[int, int]]:
    """Give idle GPUs (``free``, in index order; default: every idle GPU) to jobs in ``order``:
    each job takes, one task at a time, the GPU left where its task is fastest (the first in
    index order of least time), until its ready tasks or the GPUs it can run on run out. Read off
    the job's GPUs sorted by time (:meth:`SimState.fastest_first`): the first one left is the
    least, with no pass over the idle GPUs per task. With one GPU left (a loaded cluster's
    usual instant), the first job in ``order`` that can run there takes it, with no walk."""
    if free is None:
        avail, left_gpus = state.idle.__getitem__, state.n_idle
    else:
        avail, left_gpus = set(free).__contains__, len(free)
    every, ready, out = state.task_times, state.ready, []
    if left_gpus == 1:
        m = state.idle_gpus[0] if free is None else free[0]
        for n in order:
            if ready[n] and every[n][m] < NEVER:
                return [(n, m)]
        return []
    used: set[int] = set()
    for n in order:
        left = ready[n]
        if left:
            times = every[n]
            for m in state.fastest_first(n):
                if avail(m) and m not in used:
                    if times[m] >= NEVER:
                        break  # no GPU left that it can run on
                    used.add(m)
                    out.append((n, m))
                    left_gpus -= 1
                    left -= 1
                    if not left or not left_gpus:
                        break
        if not left_gpus:
            break
    return out


def fill_in_gpu_order(state: SimState, order: list[int]) -> list[tuple[int, int]]:
    """Heterogeneity-oblivious: idle GPUs in index order, jobs in ``order`` (a job skips the GPUs
    it cannot run on at all)."""
    free = state.idle_gpus
    out = []
    for n in order:
        mine = take_runnable(state, n, free, int(state.ready[n]))
        out += [(n, m) for m in mine]
        if not free:
            break
    return out


def take_runnable(state: SimState, n: int, free: list[int], k: int) -> list[int]:
    """Up to ``k`` GPUs of ``free`` (removed from it) that job n can run on, in list order."""
    if state.runs_anywhere[n]:  # the first k
        mine = free[:k]
        del free[:k]
        return mine
    times = state.task_times[n]
    mine = [m for m in free if times[m] < NEVER][:k] if k else []
    if len(mine) == len(free):
        free.clear()
    elif mine:
        taken = set(mine)
        free[:] = [m for m in free if m not in taken]
    return mine


def mean_task_time(state: SimState, n: int) -> float:
    """A job's task time on the average GPU: 1 / (mean speed), speed = 1 / (T^c + T^s)."""
    return float(1.0 / np.mean(1.0 / task_time(state, n)))


def mean_task_times(view: HareView) -> list[float]:
    """:func:`mean_task_time` of every job at once (the same numbers, to the bit)."""
    return (1.0 / np.mean(1.0 / (view.train + view.sync), axis=1)).tolist()


def gang_size(state: SimState, n: int) -> int:
    """GPUs a gang policy waits for before starting job n's round: all its tasks (at most the
    GPUs it can run on: every GPU, or those of a type its train time is not ``NEVER`` on); a
    round already started takes any idle GPU."""
    if state.started[n] > 0:
        return 1
    if state.runs_anywhere[n]:
        return min(state.ready[n], state.n_gpus)
    usable = sum(1 for t in state.task_times[n] if t < NEVER)
    return min(state.ready[n], usable)
