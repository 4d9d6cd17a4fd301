"""The files hetsched ships: Gavel's throughput table and traces, the Philly trace, the
instances (with their schema and manifests) and the generated docs.

They live in the repository's top-level ``data/``, ``instances/`` and ``docs/`` folders and are
installed as the packages ``hetsched.data``, ``hetsched.instances`` and ``hetsched.docs``
(``pyproject.toml``), so they are found through :mod:`importlib.resources` from a checkout, an
editable install or a wheel installed anywhere. A file that should be there and is not is an
:class:`~hetsched.errors.InstallationError`, never bad input.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from hetsched.errors import InstallationError

#: shipped folder -> the package it is installed as
PACKAGES = {"data": "hetsched.data", "instances": "hetsched.instances", "docs": "hetsched.docs"}


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


def shipped_instance(name: str) -> Path | None:
    """A shipped instance by name: ``hare_fig9``, ``paper/hare_fig9`` or ``paper/hare_fig9.json``
    (relative to ``instances/``); None if there is no such file."""
    root = shipped_dir("instances")
    stem = name[:-5] if name.endswith(".json") else name
    if Path(stem).name in ("manifest", "schema"):
        return None
    direct = root / f"{stem}.json"
    if direct.is_file():
        return direct
    if "/" not in stem:
        hits = sorted(root.rglob(f"{stem}.json"))
        if len(hits) == 1:
            return hits[0]
    return None
