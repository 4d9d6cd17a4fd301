"""hetsched: scheduling deep-learning jobs on heterogeneous GPU clusters.

Typical use::

    from hetsched import load_instance, solve, validate
    inst = load_instance("instances/paper/hare_fig9.json")
    res = solve(inst, model="hare-sched", solver="cpsat", time_limit=60)
    assert validate(inst, res.solution).valid

The names below are imported on first use (PEP 562), so that ``import hetsched`` and the
command line's ``--help`` do not load Pyomo, OR-Tools and numba until a command needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.2.0"

#: public name -> the module that defines it
_EXPORTS = {
    "allocate": "hetsched.gavel.allocate",
    "run_heuristic": "hetsched.hare.heuristic",
    "Instance": "hetsched.instance",
    "dump_instance": "hetsched.instance",
    "instance_hash": "hetsched.instance",
    "load_instance": "hetsched.instance",
    "parse_instance": "hetsched.instance",
    "TaskAssignment": "hetsched.schedule.model",
    "TaskSchedule": "hetsched.schedule.model",
    "dump_schedule": "hetsched.schedule.io",
    "load_schedule": "hetsched.schedule.io",
    "solve": "hetsched.exact.solve",
    "SolveResult": "hetsched.solvers.result",
    "Status": "hetsched.solvers.result",
    "ValidationReport": "hetsched.schedule.validate",
    "Violation": "hetsched.schedule.validate",
    "validate": "hetsched.schedule.validate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hetsched' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
