"""The files hetsched ships: Gavel's throughput table and traces, the Philly trace, the
instances (with their schema and manifests), the example sweep specs and the generated docs,
and the one resolver every command uses for a file the user names (:func:`resolve_file`).

They live in the repository's top-level ``data/``, ``instances/``, ``examples/`` and ``docs/``
folders and are installed as the packages ``hetsched.data``, ``hetsched.instances``,
``hetsched.examples`` and ``hetsched.docs``
(``pyproject.toml``), so they are found through :mod:`importlib.resources` from a checkout, an
editable install or a wheel installed anywhere. A file that should be there and is not is an
:class:`~hetsched.core.errors.InstallationError`, never bad input.
"""

from __future__ import annotations

import difflib
from importlib import resources
from pathlib import Path

from hetsched.core.errors import InputError, InstallationError

#: shipped folder -> the package it is installed as
PACKAGES = {
    "data": "hetsched.data",
    "instances": "hetsched.instances",
    "examples": "hetsched.examples",
    "docs": "hetsched.docs",
}


def shipped_dir(folder: str) -> Path:
    """The installed folder ``data``, ``instances`` or ``docs`` as a real directory."""
    try:
        root = resources.files(PACKAGES[folder])
    except (ModuleNotFoundError, KeyError) as exc:
        raise InstallationError(
            f"the shipped folder '{folder}' is not installed ({exc}); "
            "reinstall hetsched (pip install .)"
        ) from None
    path = Path(str(root))
    if not path.is_dir():
        raise InstallationError(
            f"the shipped folder '{folder}' is not a directory on disk ({root}); "
            "install hetsched unpacked (pip install .), not as a zip"
        )
    return path


def shipped(folder: str, *parts: str) -> Path:
    """A shipped file, e.g. ``shipped("data", "gavel", "simulation_throughputs.json")``."""
    path = shipped_dir(folder).joinpath(*parts)
    if not path.exists():
        raise InstallationError(
            f"the shipped file {folder}/{'/'.join(parts)} is missing from the installation "
            f"({path}); reinstall hetsched (pip install .)"
        )
    return path


def find_shipped(name: str, folder: str, suffix: str) -> Path | None:
    """The shipped file of ``folder`` that ``name`` means, or None: with or without ``suffix``,
    with or without the folder's own prefix (``instances/small/small-07.json``,
    ``small/small-07``, ``small-07``: a bare name found once anywhere below the folder)."""
    root = shipped_dir(folder)
    stem = name.replace("\\", "/")
    if stem.startswith(f"{folder}/"):
        stem = stem[len(folder) + 1 :]
    if stem.endswith(suffix):
        stem = stem[: -len(suffix)]
    if not stem or Path(stem).name in ("manifest", "schema") or ".." in Path(stem).parts:
        return None
    direct = root / f"{stem}{suffix}"
    if direct.is_file():
        return direct
    if "/" not in stem:
        hits = sorted(root.rglob(f"{stem}{suffix}"))
        if len(hits) == 1:
            return hits[0]
    return None


def shipped_names(folder: str, suffix: str) -> list[str]:
    """Every shipped file of ``folder`` with ``suffix``, as the name a user may type."""
    root = shipped_dir(folder)
    return sorted(
        str(p.relative_to(root))[: -len(suffix)]
        for p in root.rglob(f"*{suffix}")
        if p.stem not in ("manifest", "schema")
    )


def resolve_file(name: str | Path, folder: str, suffix: str, what: str) -> Path:
    """The file a user named: the path as typed if it exists, else the shipped one of that name
    (:func:`find_shipped`); otherwise an input error that lists the closest shipped names."""
    path = Path(name)
    if path.exists():
        return path
    found = find_shipped(str(name), folder, suffix)
    if found is not None:
        return found
    names = shipped_names(folder, suffix)
    stem = str(name).removesuffix(suffix).removeprefix(f"{folder}/")
    close = difflib.get_close_matches(stem, names, n=3, cutoff=0.6) or difflib.get_close_matches(
        Path(stem).name, [Path(n).name for n in names], n=3, cutoff=0.6
    )
    hint = f" (closest: {', '.join(close)})" if close else ""
    raise InputError(str(name), None, f"no such file, and no shipped {what} of that name{hint}")


def shipped_instance(name: str) -> Path | None:
    """A shipped instance by name: ``hare_fig9``, ``paper/hare_fig9``, ``paper/hare_fig9.json``
    or ``instances/paper/hare_fig9.json``; None if there is no such file."""
    return find_shipped(name, "instances", ".json")
