"""The README's tour parses with today's command line: every ``hetsched`` command of "The two
commands" and "A five-minute tour" (read the way ``.ci/readme_tour.py`` reads them, which runs
them from a wheel install in CI) is accepted by the parser, so an option renamed in the code
cannot linger in the README."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

import pytest

from hetsched.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("readme_tour", ROOT / ".ci" / "readme_tour.py")
readme_tour = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_tour)
COMMANDS = readme_tour.tour_commands((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_tour_has_commands():
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize("command", [c for c, _ in COMMANDS])
def test_every_tour_command_parses(command):
    for part in command.split("&&"):
        argv = shlex.split(part)
        assert argv[0] == "hetsched"
        build_parser(argv[1]).parse_args(argv[1:])  # an unknown option exits 2: a failure here
