"""The documentation site is whole: every page the navigation names exists, every page of
``docs/`` (and every notebook and verdict the site mounts) is in the navigation, the command-line
reference has every command, the API reference every public name of :mod:`hetsched`, and the
formats page every key a result and a schedule have. ``mkdocs build --strict`` in ``.ci/run``
checks the links and the rendering; these run without MkDocs installed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import hetsched
from hetsched.cli import build_parser
from hetsched.schedule.model import SCHEDULE_KEYS, TaskSchedule
from hetsched.solvers.result import RESULT_KEYS, SolveResult, Status

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CONFIG = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
NAV = re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.(?:md|ipynb))\s*$", CONFIG, flags=re.M)
#: site folder -> repository folder that docs/_hooks/site.py mounts
MOUNTED = {"notebooks": ROOT / "notebooks", "proofs": ROOT / "proofs"}


def _source(page: str) -> Path:
    folder, _, rest = page.partition("/")
    return MOUNTED[folder] / rest if folder in MOUNTED else DOCS / page


def test_the_navigation_names_the_sections_the_site_promises():
    for section in ("Getting started", "Tutorials", "How-to", "Reference", "Papers", "Benchmarks"):
        assert re.search(rf"^  - {section}:", CONFIG, flags=re.M), section
    assert len(NAV) == len(set(NAV)), "a page is in the navigation twice"


@pytest.mark.parametrize("page", NAV)
def test_every_page_in_the_navigation_exists(page):
    assert _source(page).is_file(), page


def test_every_page_is_in_the_navigation():
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "_hooks" not in p.parts}
    pages |= {f"notebooks/{p.name}" for p in MOUNTED["notebooks"].glob("*.ipynb")}
    pages |= {f"proofs/{p.name}" for p in MOUNTED["proofs"].glob("*.md")}
    assert pages - set(NAV) == set(), "pages missing from mkdocs.yml's nav"


def test_every_command_is_in_the_cli_reference():
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and a.choices)
    missing = [name for name in sub.choices if f"## `hetsched {name}`" not in text]
    assert not missing and len(sub.choices) >= 20


def test_every_public_name_is_in_the_api_reference():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    found = re.findall(r"^::: ((?:\w+\.)+)(\w+)$", text, flags=re.M)
    documented = {name: module.rstrip(".") for module, name in found}
    for name in hetsched.__all__:
        assert name in documented, f"{name} is not in docs/api.md"
        module = importlib.import_module(documented[name])
        assert getattr(module, name) is getattr(hetsched, name), name


def test_every_documented_api_path_resolves():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    for path in re.findall(r"^::: (\S+)$", text, flags=re.M):
        module, _, name = path.rpartition(".")
        assert hasattr(importlib.import_module(module), name), path


def test_the_formats_page_has_every_result_and_schedule_key():
    result = SolveResult("i", "m", "s", Status.OPTIMAL)
    assert set(RESULT_KEYS) == set(result.to_dict())
    schedule = TaskSchedule.of([], instance="i", instance_hash="h")
    assert set(SCHEDULE_KEYS) == set(schedule.to_dict())
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    for key in [*RESULT_KEYS, *SCHEDULE_KEYS]:
        assert f"| `{key}` |" in text, key
