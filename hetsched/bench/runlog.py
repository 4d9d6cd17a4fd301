"""One exact solve as a row of the exact benchmarks' run store (:mod:`hetsched.core.runstore`):
status, objective, bound, gap, wall and CPU seconds, or the error; and whether it kept to its
time limit (the limit plus :func:`hetsched.core.deadline.grace`, measured around the whole call)."""

from __future__ import annotations

import platform
import sys
import time
from typing import Callable

from hetsched.core.deadline import grace
from hetsched.core.runstore import RunStore
from hetsched.exact.solve import solve
from hetsched.instance.model import Instance
from hetsched.solvers.result import Status


def solve_row(inst: Instance, model: str, solver: str, time_limit: float, **kwargs) -> dict:
    """One solve as a row: status, objective, bound, gap, wall and CPU seconds, the method's log;
    a method that cannot take the instance gives status ``error`` and the reason.
    ``wall_seconds``: the whole call as the caller waits for it (``seconds``: the solve's own
    clock), validation included."""
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        r = solve(inst, model, solver, time_limit=time_limit, **kwargs)
        row = {
            "instance": inst.name,
            "status": r.status.value,
            "objective": r.objective,
            "bound": r.bound,
            "gap": r.gap,
            "seconds": round(r.seconds, 3),
            "log": r.log,
        }
    except Exception as exc:  # a method that cannot build the model at this size
        row = {"instance": inst.name, "status": "error", "note": f"{exc.__class__.__name__}: {exc}"}
    return {
        **row,
        "wall_seconds": round(time.perf_counter() - wall, 3),
        "cpu_seconds": round(time.process_time() - cpu, 3),
        "python": platform.python_version(),
    }


def run_or_resume(
    done: RunStore,
    key: tuple,
    rows: list[dict],
    make_row: Callable[[], dict],
    label: str,
    as_json: bool,
) -> None:
    """Append ``key``'s row to ``rows``: read from the run store ``done`` if it is there (a
    resumed benchmark), else made by ``make_row()`` with ``label`` on stderr first, stored at
    once and, unless ``as_json``, printed as one :func:`run_line`."""
    if key in done:
        rows.append(done.get(key))
        return
    print(f"bench: {label} ...", file=sys.stderr, flush=True)
    row = make_row()
    done.add(row)
    rows.append(row)
    if not as_json:
        print(run_line(label, row), flush=True)


def run_line(label: str, row: dict) -> str:
    """One progress line of an exact benchmark: the run's label, status, objective, gap, times."""
    gap = "-" if row.get("gap") is None else f"{100 * row['gap']:.3f}%"
    return (
        f"{label} {row['status']:<10} obj={row.get('objective')} gap={gap:<9} "
        f"t={row.get('seconds', '-')}s wall={row.get('wall_seconds', '-')}s "
        f"cpu={row.get('cpu_seconds', '-')}s"
    )


#: seconds to unwind after a deadline fires at the limit plus grace, and to return: a build cut
#: short by :class:`~hetsched.core.deadline.BuildTimeout` comes back 1-2 ms after it when small; a
#: model of millions of objects takes 0.2-0.3 s to free, and a garbage-collector pass holds the
#: alarm as long (measured on Hare models of 11,000 and of 112 tasks on 12 GPUs)
UNWIND_SECONDS = 0.5


def past_the_limit(rows: list[dict], label: str) -> list[str]:
    """The runs (``label`` formatted over each row) that the caller waited for longer than
    their time limit plus its grace (and ``UNWIND_SECONDS``): a method that does not stop when
    told."""
    return [
        label.format(**r)
        for r in rows
        if "wall_seconds" in r
        and r["wall_seconds"] > r["time_limit"] + grace(r["time_limit"]) + UNWIND_SECONDS
    ]


def largest_proven(rows: list[dict], label: str, size: str) -> dict[str, int]:
    """Per ``label`` (a format string over a row's fields), the largest ``size`` at which every
    run was proven optimal (0: none)."""
    proven: dict[str, dict[int, bool]] = {}
    for r in rows:
        at = proven.setdefault(label.format(**r), {})
        at[r[size]] = at.get(r[size], True) and r["status"] == Status.OPTIMAL.value
    return {k: max((n for n, ok in v.items() if ok), default=0) for k, v in proven.items()}
