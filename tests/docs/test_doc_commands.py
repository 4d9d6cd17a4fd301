"""The commands the README and the documentation pages show parse with today's command line:
every ``hetsched`` command of the README's tour and of every page's ``bash`` blocks (read the way
``.ci/doc_commands.py`` reads them, which runs them from a wheel install in CI) is accepted by the
parser, so an option renamed in the code cannot linger in a page. Every ``python`` block of a page
at least compiles (CI runs them)."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

import pytest

from hetsched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("doc_commands", ROOT / ".ci" / "doc_commands.py")
doc_commands = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(doc_commands)

README = ROOT / "README.md"
PAGES = sorted(
    [ROOT / "docs" / "getting-started.md"]
    + [
        p
        for folder in ("tutorials", "how-to", "papers")
        for p in (ROOT / "docs" / folder).glob("*.md")
    ]
)
STEPS = [
    (path, step)
    for path in [README, *PAGES]
    for step in doc_commands.page_steps(path.read_text(encoding="utf-8"), readme=path == README)
]
COMMANDS = [(p, s.code) for p, s in STEPS if s.kind == "bash"]
SCRIPTS = [(p, s.code) for p, s in STEPS if s.kind == "python"]


def test_the_readme_tour_has_about_ten_commands():
    tour = doc_commands.tour_commands(README.read_text(encoding="utf-8"))
    assert 8 <= len(tour) <= 16


def test_the_readme_is_a_front_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


RUNNABLE = [p for p in PAGES if p.parent.name == "tutorials" or p.name == "getting-started.md"]


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_tutorial_has_something_to_run(path):
    assert any(p == path for p, _ in STEPS), f"{path.name}: no bash or python block"


@pytest.mark.parametrize(
    "command", [c for _, c in COMMANDS], ids=[f"{p.stem}:{c[:60]}" for p, c in COMMANDS]
)
def test_every_shown_command_parses(command):
    for part in command.split("&&"):
        argv = shlex.split(part)
        assert argv[0] == "hetsched"
        build_parser(argv[1]).parse_args(argv[1:])  # an unknown option exits 2: a failure here


@pytest.mark.parametrize("script", [s for _, s in SCRIPTS], ids=[p.stem for p, _ in SCRIPTS])
def test_every_python_block_compiles(script):
    compile(script, "<doc block>", "exec")


def test_page_steps_reads_bash_python_and_skips_fragments():
    page = (
        "```bash\npip install . && hetsched solve x  # note\nmkdocs serve\n# a comment\n```\n"
        "```python\nprint(1)\n```\n```py\nnot run\n```\n```text\nhetsched no\n```\n"
        '```toml title="a.toml"\nx = 1\n```\n'
    )
    steps = doc_commands.page_steps(page)
    assert [(s.kind, s.code, s.comment) for s in steps] == [
        ("bash", "hetsched solve x", "note"),
        ("python", "print(1)\n", ""),
        ("file", "x = 1\n", "a.toml"),
    ]
