"""Local search over list-scheduling priorities: a better upper bound than one list schedule.

A solution is a priority per round of each job; the list scheduler (Hare's Algorithm 1,
lines 4-18, :func:`hare_alg1`) turns it into a schedule. Moves swap the priorities of two
rounds or move one round's priority next to another's; a move is kept when the objective
sum_n w_n C_n does not get worse. Seeded and counted in evaluations, not seconds, so the same
seed gives the same schedule on any machine. Exact models use the result to bound their
horizon: a lower upper bound gives narrower start windows.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from hetsched.hare.algorithm1 import Alg1Run, hare_alg1
from hetsched.hare.list_scheduling import MACHINE_RULES
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.hare.view import HareView, hare_view
from hetsched.schedule.model import TaskSchedule


def local_search_upper_bound(
    instance,
    evaluations: int = 2000,
    seed: int = 0,
    round_priorities: np.ndarray | None = None,
    keep_going: Callable[[], bool] | None = None,
    view: HareView | None = None,
) -> tuple[float, TaskSchedule]:
    """A feasible schedule of ``instance`` and its objective: the best of
    :func:`quick_upper_bound` and a local search of ``evaluations`` list schedules.

    ``round_priorities`` (one per round of each job, jobs in file order, lower first) is where
    the search starts; by default each round's earliest possible start a_n + r min cycle.
    ``keep_going``, asked before every 8th move, may stop the search early (a clock: then the
    result depends on the machine's speed, as any time-limited search's does). ``view``: the
    instance's view, if the caller has it.
    """
    view = hare_view(instance) if view is None else view
    best_value, best_schedule = quick_upper_bound(instance, view)
    rng = np.random.default_rng([seed, 7])
    n_arr, r_arr, _ = view.task_arrays
    first_round = np.concatenate(([0], np.cumsum(view.rounds)[:-1]))
    round_of_task = first_round[n_arr] + r_arr
    n_rounds = int(np.sum(view.rounds))
    job_of_round = np.repeat(np.arange(view.n_jobs), view.rounds)
    rnd_of_round = np.arange(n_rounds) - first_round[job_of_round]
    # start: earliest possible start of each round, a_n + r * min cycle
    prio = view.arrival[job_of_round] + rnd_of_round * view.min_cycle[job_of_round]
    if round_priorities is not None:
        prio = np.asarray(round_priorities, dtype=float)
        if prio.shape != (n_rounds,) or not np.all(np.isfinite(prio)):
            raise ValueError(f"round_priorities must be {n_rounds} finite numbers, one per round")

    def run(p: np.ndarray) -> tuple[float, Alg1Run]:
        out = None
        for rule in MACHINE_RULES:
            res = hare_alg1(view, p[round_of_task], rule)
            value = res.objective()
            if out is None or value < out[0]:
                out = (value, res)
        return out

    current = prio.copy()
    cur_value, run_ = run(current)
    best = (cur_value, run_)
    for move in range(max(0, evaluations // len(MACHINE_RULES))):
        if keep_going is not None and move % 8 == 0 and not keep_going():
            break
        cand = current.copy()
        a, b = rng.integers(n_rounds, size=2)
        if rng.random() < 0.5:
            cand[a], cand[b] = cand[b], cand[a]
        else:
            cand[a] = cand[b] + (1e-3 if rng.random() < 0.5 else -1e-3)
        value, res = run(cand)
        if value <= cur_value:
            current, cur_value = cand, value
            if value < best[0]:
                best = (value, res)
    if best[0] < best_value:
        return best[0], best[1].to_schedule(instance.name, best_schedule.instance_hash)
    return best_value, best_schedule
