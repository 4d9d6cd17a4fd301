"""Hare_Sched (4)-(8), anytime: the portfolio of :mod:`hetsched.hare.portfolio`.

Not a new model of the problem but a method over the others: list schedules and the per-job
bound of (4), (6), (7) at once, Algorithm 1 on the interval LP's order (its LP optimum a lower
bound), then the strongest exact formulation of ``hare-sched`` that takes the instance, each with
what the time limit leaves. The result is the best validated schedule beside the largest proven
bound, so every instance, up to the paper's 200 jobs x 160 GPUs, gets both within the limit.
``--solver auto`` picks it first for ``hare-sched``; ``--solver cpsat`` (or ``bp``, ``colgen``,
``highs``) runs one method alone.
"""

from __future__ import annotations

from typing import Any

from hetsched.exact.spec import FormulationSpec
from hetsched.hare.portfolio import portfolio
from hetsched.instance.model import Instance
from hetsched.schedule.model import MAX_SCHEDULE_TASKS
from hetsched.solvers.portfolio import Portfolio


def build(instance: Instance) -> Portfolio:
    return portfolio(instance)  # the methods run when the backend calls it, within the limit


def extract(built: Any, instance: Instance, schedule: Any) -> Any:
    return schedule  # the portfolio's best schedule; solve() validates it


def supports(instance: Instance) -> str | None:
    if instance.n_tasks > MAX_SCHEDULE_TASKS:
        return f"{instance.n_tasks} tasks (a schedule holds at most {MAX_SCHEDULE_TASKS})"
    return None


SPEC = FormulationSpec(
    name="hare-sched",
    kind="portfolio",
    build=build,
    extract=extract,
    summary="Hare_Sched anytime: list schedules, Algorithm 1 + interval LP, then the strongest exact method; best of each",
    supports=supports,
)
