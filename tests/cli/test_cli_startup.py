"""Issue 21: the light CLI. ``hetsched --help`` loads none of the engine's heavy libraries, and
``simulate`` and ``allocate --fast`` do not load Pyomo (times are measured by
``hetsched bench startup``, not here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hetsched.bench.startup import _CHILD, HEAVY, commands


def _loaded(argv: list[str]) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, timeout=300
    )
    code, loaded, _ = json.loads(proc.stderr.strip().splitlines()[-1])
    return code, loaded


def test_help_loads_no_heavy_library():
    code, loaded = _loaded(["--help"])
    assert code == 0
    assert loaded == [], f"hetsched --help loaded {loaded} (none of {HEAVY} expected)"


@pytest.mark.parametrize("name", ["simulate hare_fig9 --policy hlas", "allocate hadar_fig1 --fast"])
def test_simulate_and_fast_allocation_do_not_load_pyomo(name):
    code, loaded = _loaded(commands()[name])
    assert code == 0
    assert "pyomo" not in loaded and "ortools" not in loaded


def test_stub_commands_are_the_full_parser_commands():
    """``--help`` lists every command the full parser has, with the same help line."""
    from hetsched.cli import build_parser

    def listed(parser):
        sub = next(a for a in parser._actions if a.dest == "command")
        return {c.dest: c.help for c in sub._choices_actions}

    assert listed(build_parser("")) == listed(build_parser())
