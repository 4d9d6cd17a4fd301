"""hetsched: scheduling deep-learning jobs on heterogeneous GPU clusters.

Typical use::

    from hetsched import load_instance, solve, validate
    inst = load_instance("instances/paper/hare_fig9.json")
    res = solve(inst, model="hare-sched", solver="cpsat", time_limit=60)
    assert validate(inst, res.solution).valid
"""

from hetsched.allocate import allocate
from hetsched.heuristic import run_heuristic
from hetsched.instance import Instance, dump_instance, instance_hash, load_instance, parse_instance
from hetsched.schedule import TaskAssignment, TaskSchedule, dump_schedule, load_schedule
from hetsched.solve import solve
from hetsched.solvers import SolveResult, Status
from hetsched.validate import ValidationReport, Violation, validate

__version__ = "0.2.0"

__all__ = [
    "allocate",
    "Instance",
    "SolveResult",
    "Status",
    "TaskAssignment",
    "TaskSchedule",
    "ValidationReport",
    "Violation",
    "dump_instance",
    "dump_schedule",
    "instance_hash",
    "load_instance",
    "load_schedule",
    "parse_instance",
    "run_heuristic",
    "solve",
    "validate",
]
