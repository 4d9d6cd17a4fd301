"""``hetsched export``: write a Pyomo formulation of an instance as an LP or MPS file, so that any
MILP solver can take it. Variable and constraint names are the model's own (symbolic labels:
``arrival[J1,0,0]``, ``one_group[3]``, ...), so a solver's log reads like the formulation.

The objective in the file is the model's own; formulations whose reported objective is a
transform of it (``objective_transform``, e.g. a makespan recovered from a change of variables)
say so in the returned note."""

from __future__ import annotations

from pathlib import Path

from hetsched.core.errors import HetschedError
from hetsched.core.files import atomic_path
from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import build_options
from hetsched.instance.model import Instance

FORMATS = ("lp", "mps")


def export_model(
    instance: Instance, model: str, fmt: str, path: str | Path, options: dict | None = None
) -> str:
    """Build ``model`` for ``instance`` and write it; returns a one-line note on what was written."""
    if fmt not in FORMATS:
        raise HetschedError(f"unknown export format '{fmt}' (known: {', '.join(FORMATS)})")
    spec = find_formulation(model, "pyomo")
    built = spec.build(instance, **build_options(spec, options))
    out = Path(path)
    from pyomo.opt import ProblemFormat

    kind = {"lp": ProblemFormat.cpxlp, "mps": ProblemFormat.mps}[fmt]
    with atomic_path(out) as tmp:  # a stopped export leaves no half-written model file
        built.write(str(tmp), format=kind, io_options={"symbolic_solver_labels": True})
    note = f"{spec.name} of {instance.name} -> {out} ({fmt.upper()}, {built.nvariables()} variables, {built.nconstraints()} constraints)"
    if spec.objective_transform is not None:
        note += (
            "; the file's objective is the model's, which hetsched maps to the problem's objective"
        )
    return note
