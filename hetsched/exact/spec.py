"""How a formulation plugs into the engine: :class:`FormulationSpec`.

A formulation is one module in ``models/`` or a subpackage of it (installed as
``hetsched.models``) that defines ``SPEC = FormulationSpec(...)`` (or ``SPECS``, a list): a name,
the kind of model it builds (``pyomo``, ``cpsat``, ``colgen``, ``machine-schedules``),
``build(instance)`` and ``extract(model, instance, value)``. Solvers, validation, CLI, audit and
reports work on it unchanged. The registry that finds them is :mod:`hetsched.exact.registry`; a
notebook can pass a spec of its own to :func:`hetsched.exact.solve.solve` directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from hetsched.core.reports import ValidationReport
from hetsched.instance.model import Instance


@dataclass(frozen=True)
class FormulationSpec:
    name: str  # e.g. "hare-sched"; the same name may exist once per model kind
    kind: str  # "pyomo" or "cpsat"
    build: Callable[[Instance], Any]
    extract: Callable[[Any, Instance, Callable[[Any], float]], Any]
    summary: str = ""
    objective_is_bound: bool = False  # relaxations: the optimum is a lower bound of the problem
    # the independent validator of the solutions; None: the task-schedule validator
    # (:func:`hetsched.schedule.validate.validate`, Hare_Sched (4)-(8)); see ``formulation.validator_of``
    validator: Callable[[Instance, Any], ValidationReport] | None = None
    sense: str = "min"  # of the problem's objective (what the validator recomputes): "min" or "max"
    # (value, built model) -> the problem's objective: maps the model's objective and bound (e.g.
    # makespan = M/zeta after a change of variables); monotone, so a valid model bound stays valid
    objective_transform: Callable[[float, Any], float] | None = None
    options: tuple[
        str, ...
    ] = ()  # keyword options build() accepts (e.g. "groups"), passed by solve()
    # for relaxations and duals: which side of the scheduling problem's optimum the value bounds
    # ("lower"/"upper"); default: lower for a minimization, upper for a maximization
    bound_side: str = ""
    # solutions written by ``hetsched solve --out`` carry this ``format``; ``load_solution(data,
    # source)`` reads one back so that ``hetsched validate`` can check it with ``validator``
    # (None: the default task schedule, or a solution that is not read back)
    solution_format: str = ""
    load_solution: Callable[[Any, str], Any] | None = None
    # instance -> None if the formulation takes it, else the reason it does not (what
    # ``--solver auto`` reads before building); None: it takes every instance of its model
    supports: Callable[[Instance], str | None] | None = None
    # lazy constraints: (built model, value) -> how many violated inequalities it added to the
    # model; :func:`hetsched.exact.solve.solve` re-solves until none is found (a cutting-plane loop;
    # every solve's bound is a bound of the full model, so a loop cut short keeps its bound)
    separate: Callable[[Any, Callable[[Any], float]], int] | None = None
    # ``separate`` also cuts off fractional points: solve() first runs it on the LP relaxation
    # (:mod:`hetsched.solvers.root_cuts`, up to ROOT_CUT_SHARE of the limit), so the MILP solver
    # starts from the tightened relaxation (a MILP solver without cut callbacks sees them no other way)
    separate_fractional: bool = False

    def refusal(self, instance: Instance) -> str | None:
        """Why the formulation does not take ``instance`` (``supports``), or None if it does."""
        return None if self.supports is None else self.supports(instance)
