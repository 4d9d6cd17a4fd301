"""The registry of formulations: every ``SPEC``/``SPECS`` (:class:`hetsched.spec.FormulationSpec`)
of the modules of ``hetsched.models``, found by walking the package, and ``--solver auto``'s pick.
Formulations import :mod:`hetsched.spec`, never this module (which imports them)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable

from hetsched.errors import HetschedError
from hetsched.instance.model import Instance
from hetsched.reports import ValidationReport
from hetsched.spec import FormulationSpec
from hetsched.validate import validate


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


def validator_of(spec: FormulationSpec) -> Callable[[Instance, Any], ValidationReport]:
    """The validator of a formulation's solutions: its own, or the task-schedule validator."""
    return spec.validator or validate


def formulations() -> dict[tuple[str, str], FormulationSpec]:
    """Every formulation in ``models/``, by (name, kind)."""
    return _discover()


def solution_reader(
    fmt: str,
) -> tuple[Callable[[Any, str], Any], Callable[[Instance, Any], ValidationReport]] | None:
    """(loader, validator) for solutions of format ``fmt``; None if no formulation reads it."""
    from hetsched.schedule import FORMAT, schedule_from_dict

    if fmt == FORMAT:
        return schedule_from_dict, validate
    for spec in formulations().values():
        if spec.solution_format == fmt and spec.load_solution is not None:
            return spec.load_solution, validator_of(spec)
    return None


def model_names() -> list[str]:
    return sorted({name for name, _ in formulations()})


#: ``--solver auto`` tries the kinds in this order and takes the first formulation of the model
#: that supports the instance: the strongest exact method first.
AUTO_ORDER = ("machine-schedules", "cpsat", "colgen", "lp", "pyomo")


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
                f" (passed over: {'; '.join(skipped)})" if skipped else ""
            )
        skipped.append(f"{kind}: {reason}")
    if skipped:
        raise HetschedError(
            f"no formulation of model '{name}' takes this instance: {'; '.join(skipped)}"
        )
    raise HetschedError(f"unknown model '{name}' (known: {', '.join(model_names())})")


def find_formulation(name: str, kind: str) -> FormulationSpec:
    specs = formulations()
    if (name, kind) in specs:
        return specs[(name, kind)]
    kinds = sorted(k for n, k in specs if n == name)
    if kinds:
        raise HetschedError(
            f"model '{name}' has no {kind} formulation (it has: {', '.join(kinds)})"
        )
    raise HetschedError(f"unknown model '{name}' (known: {', '.join(model_names())})")
