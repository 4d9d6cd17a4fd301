"""Where Algorithm 1's H comes from (line 3): a relaxation's x^, or a rule.

An ordering maps an instance to H (one number per task, D order) and, when it solved a
relaxation, a valid lower bound on Hare_Sched's optimum. Register a new one in ORDERINGS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.hare.algorithm1 import task_priorities
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.model import Instance
from hetsched.solvers.result import SolveResult, Status


@dataclass
class Ordering:
    priority: (
        np.ndarray | None
    )  # H_i per task, D order; None: the relaxation hit its time limit first
    bound: float | None = None  # a valid lower bound on OPT, if the ordering proved one
    relaxation: SolveResult | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def starts_in_d_order(view: HareView, schedule) -> np.ndarray:
    x = np.full(view.n_tasks, np.nan)
    index = {j: n for n, j in enumerate(view.job_ids)}
    n = np.array([index[j] for j in schedule.job_ids], dtype=np.int64)[schedule.job]
    x[view.task_offset[n] + schedule.round * view.tasks_per_round[n] + schedule.task] = (
        schedule.start
    )
    if np.isnan(x).any():
        raise HetschedError("the relaxation's solution misses some tasks")
    return x


def _from_relaxation(model: str) -> Callable[..., Ordering]:
    def order(
        instance: Instance,
        time_limit: float | None = None,
        threads: int | None = None,
        seed: int = 0,
        model_options: dict | None = None,
        gap: float = 0.0,
    ) -> Ordering:
        from hetsched.exact.solve import solve

        view = hare_view(instance)
        # auto: the strongest formulation of the relaxation (an LP as arrays where one exists)
        res = solve(
            instance,
            model,
            "auto",
            time_limit=time_limit,
            gap=gap,
            threads=threads,
            seed=seed,
            options=model_options,
        )
        if res.solution is None and res.status == Status.TIME_LIMIT:
            return Ordering(
                None,
                None,
                res,
                res.seconds,
                [
                    f"{model} found no solution within the time limit "
                    f"({res.notes[-1] if res.notes else res.status.value}); "
                    "try a larger --time-limit or another --order"
                ],
            )
        if res.solution is None or res.status in (Status.ERROR, Status.INFEASIBLE):
            raise HetschedError(
                f"{model} gave no solution ({res.status.value}"
                f"{'; ' + res.notes[-1] if res.notes else ''}); try a larger --time-limit "
                "or another --order"
            )
        x_hat = (
            res.solution.round_starts()
            if hasattr(res.solution, "round_starts")
            else starts_in_d_order(view, res.solution)
        )
        notes = [f"H from {model} ({res.status.value}, {res.seconds:.2f} s)"]
        if res.status != Status.OPTIMAL:
            notes.append(
                f"{model} not solved to optimality: H comes from its incumbent; the bound is its best bound"
            )
        return Ordering(task_priorities(view, x_hat), res.bound, res, res.seconds, notes)

    return order


def arrival_priorities(instance: Instance, **_) -> Ordering:
    """H_i = a_n + r min_m(T^c+T^s) + max_m T^c / 2: x^ replaced by the earliest start (4), (7)."""
    view = hare_view(instance)
    n, r, _ = view.task_arrays
    return Ordering(
        task_priorities(view, view.arrival[n] + r * view.min_cycle[n]),
        notes=["H from earliest starts"],
    )


def wspt_priorities(instance: Instance, **_) -> Ordering:
    """Whole jobs by Smith's ratio (least work / weight), arrivals first: H = the job's rank."""
    view = hare_view(instance)
    n, r, _ = view.task_arrays
    work = view.rounds * view.tasks_per_round * view.train.min(axis=1)
    rank = np.empty(view.n_jobs)
    rank[np.lexsort((np.arange(view.n_jobs), work / view.weight, view.arrival))] = np.arange(
        view.n_jobs
    )
    return Ordering(rank[n] * (1 + int(view.rounds.max())) + r, notes=["H = WSPT job rank"])


ORDERINGS: dict[str, Callable[..., Ordering]] = {
    "hare-sched-rl": _from_relaxation("hare-sched-rl"),  # the paper's line 3
    "hare-sched-rl-subsets": _from_relaxation(
        "hare-sched-rl-subsets"
    ),  # (9) for every subset; <= 12 tasks
    "hare-interval-lp": _from_relaxation("hare-interval-lp"),  # cluster scale
    "arrival": arrival_priorities,
    "wspt": wspt_priorities,
}


def ordering(name: str, instance: Instance, **options) -> Ordering:
    if name not in ORDERINGS:
        raise HetschedError(f"unknown order '{name}' (known: {', '.join(ORDERINGS)})")
    t0 = time.perf_counter()
    out = ORDERINGS[name](instance, **options)
    out.seconds = time.perf_counter() - t0
    return out
