"""The registry of formulations, and ``--solver auto``'s pick.

Formulations are plugins: a package registers itself under the entry-point group
``hetsched.formulations`` (hetsched's own ``pyproject.toml`` registers ``hetsched.models``), and
the registry walks every registered package for ``SPEC``/``SPECS``
(:class:`hetsched.exact.spec.FormulationSpec`). The engine so holds no import of any
formulation: the models sit above the packages of their papers, which may call ``solve()``
(see ``docs/architecture.md``), and a researcher's own package adds formulations by declaring
the same entry point. A notebook passes its spec to :func:`hetsched.exact.solve.solve` directly.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Callable

from hetsched.core.errors import HetschedError, InstallationError
from hetsched.core.reports import ValidationReport
from hetsched.exact.spec import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.schedule.validate import validate

#: the entry-point group under which packages register their formulations
GROUP = "hetsched.formulations"


@cache
def plugin_packages() -> tuple[str, ...]:
    """The packages registered under :data:`GROUP` (read once per process from the installed
    metadata); none is an installation problem (``pip install -e .`` writes them)."""
    names = tuple(sorted(ep.value for ep in entry_points(group=GROUP)))
    if not names:
        raise InstallationError(
            f"no formulations are registered (entry-point group '{GROUP}'): "
            "install hetsched (pip install . or pip install -e .) rather than run it from a path"
        )
    return names


def _discover() -> dict[tuple[str, str], FormulationSpec]:
    found: dict[tuple[str, str], FormulationSpec] = {}
    for name in plugin_packages():
        pkg = importlib.import_module(name)
        modules = [pkg]
        if hasattr(pkg, "__path__"):  # a package: every module below it
            modules += [
                importlib.import_module(info.name)
                for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}.")
            ]
        for module in modules:
            specs = list(getattr(module, "SPECS", ())) + [getattr(module, "SPEC", None)]
            for spec in specs:
                if isinstance(spec, FormulationSpec):
                    found[(spec.name, spec.kind)] = spec
    return found


def validator_of(spec: FormulationSpec) -> Callable[[Instance, Any], ValidationReport]:
    """The validator of a formulation's solutions: its own, or the task-schedule validator."""
    return spec.validator or validate


def formulations() -> dict[tuple[str, str], FormulationSpec]:
    """Every registered formulation (``models/`` and any plugin package), by (name, kind)."""
    return _discover()


def solution_reader(
    fmt: str,
) -> tuple[Callable[[Any, str], Any], Callable[[Instance, Any], ValidationReport]] | None:
    """(loader, validator) for solutions of format ``fmt``; None if no formulation reads it."""
    from hetsched.schedule.model import FORMAT, schedule_from_dict

    if fmt == FORMAT:
        return schedule_from_dict, validate
    for spec in formulations().values():
        if spec.solution_format == fmt and spec.load_solution is not None:
            return spec.load_solution, validator_of(spec)
    return None


def model_names() -> list[str]:
    return sorted({name for name, _ in formulations()})


#: ``--solver auto`` tries the kinds in this order and takes the first formulation of the model
#: that supports the instance: a portfolio (a method over the model's other formulations, which
#: always returns a schedule and a bound) where the model has one, then the strongest exact
#: method first.
AUTO_ORDER = ("portfolio", "machine-schedules", "cpsat", "colgen", "lp", "pyomo")


def auto_formulation(
    name: str, instance: Instance, exclude: tuple[str, ...] = ()
) -> tuple[FormulationSpec, str]:
    """(the formulation ``--solver auto`` picks for model ``name`` on ``instance``, why); kinds
    in ``exclude`` are passed over (a portfolio asks for the strongest method besides itself)."""
    specs = formulations()
    skipped = []
    for kind in (k for k in AUTO_ORDER if k not in exclude):
        spec = specs.get((name, kind))
        if spec is None:
            continue
        reason = spec.refusal(instance)
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
