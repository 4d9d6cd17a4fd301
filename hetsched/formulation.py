"""How a formulation plugs into the engine, and the registry that finds them.

A formulation is one module in ``models/`` or a subpackage of it (installed as
``hetsched.models``) that defines ``SPEC = FormulationSpec(...)`` (or ``SPECS``, a list): a name, the kind of model it builds (``pyomo`` or
``cpsat``), ``build(instance)`` and ``extract(model, instance, value)``. Solvers, validation,
CLI, audit and reports work on it unchanged. A notebook can register a spec of its own by
passing it to :func:`hetsched.solve.solve` directly.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

from hetsched.errors import HetschedError
from hetsched.instance.model import Instance
from hetsched.validate import ValidationReport, validate


@dataclass(frozen=True)
class FormulationSpec:
    name: str  # e.g. "hare-sched"; the same name may exist once per model kind
    kind: str  # "pyomo" or "cpsat"
    build: Callable[[Instance], Any]
    extract: Callable[[Any, Instance, Callable[[Any], float]], Any]
    summary: str = ""
    objective_is_bound: bool = False  # relaxations: the optimum is a lower bound of the problem
    validator: Callable[[Instance, Any], ValidationReport] = validate
    sense: str = "min"  # of the problem's objective (what the validator recomputes): "min" or "max"
    # (value, built model) -> the problem's objective: maps the model's objective and bound (e.g.
    # makespan = M/zeta after a change of variables); monotone, so a valid model bound stays valid
    objective_transform: Callable[[float, Any], float] | None = None
    options: tuple[str, ...] = ()  # keyword options build() accepts (e.g. "groups"), passed by solve()
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


def _discover() -> dict[tuple[str, str], FormulationSpec]:
    import hetsched.models as pkg

    found: dict[tuple[str, str], FormulationSpec] = {}
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}."):
        module = importlib.import_module(info.name)
        specs = list(getattr(module, "SPECS", ())) + [getattr(module, "SPEC", None)]
        for spec in specs:
            if isinstance(spec, FormulationSpec):
                found[(spec.name, spec.kind)] = spec
    return found


def formulations() -> dict[tuple[str, str], FormulationSpec]:
    """Every formulation in ``models/``, by (name, kind)."""
    return _discover()


def solution_reader(fmt: str) -> tuple[Callable[[Any, str], Any], Callable[[Instance, Any], ValidationReport]] | None:
    """(loader, validator) for solutions of format ``fmt``; None if no formulation reads it."""
    from hetsched.schedule import FORMAT, schedule_from_dict

    if fmt == FORMAT:
        return schedule_from_dict, validate
    for spec in formulations().values():
        if spec.solution_format == fmt and spec.load_solution is not None:
            return spec.load_solution, spec.validator
    return None


def model_names() -> list[str]:
    return sorted({name for name, _ in formulations()})


#: ``--solver auto`` tries the kinds in this order and takes the first formulation of the model
#: that supports the instance: the strongest exact method first.
AUTO_ORDER = ("machine-schedules", "cpsat", "colgen", "pyomo")


def auto_formulation(name: str, instance: Instance) -> tuple[FormulationSpec, str]:
    """(the formulation ``--solver auto`` picks for model ``name`` on ``instance``, why)."""
    specs = formulations()
    skipped = []
    for kind in AUTO_ORDER:
        spec = specs.get((name, kind))
        if spec is None:
            continue
        reason = None if spec.supports is None else spec.supports(instance)
        if reason is None:
            return spec, f"the strongest {name} method that takes this instance" + (
                f" (passed over: {'; '.join(skipped)})" if skipped else "")
        skipped.append(f"{kind}: {reason}")
    if skipped:
        raise HetschedError(f"no formulation of model '{name}' takes this instance: {'; '.join(skipped)}")
    raise HetschedError(f"unknown model '{name}' (known: {', '.join(model_names())})")


def find_formulation(name: str, kind: str) -> FormulationSpec:
    specs = formulations()
    if (name, kind) in specs:
        return specs[(name, kind)]
    kinds = sorted(k for n, k in specs if n == name)
    if kinds:
        raise HetschedError(f"model '{name}' has no {kind} formulation (it has: {', '.join(kinds)})")
    raise HetschedError(f"unknown model '{name}' (known: {', '.join(model_names())})")
