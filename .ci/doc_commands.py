"""Run the commands the README and the documentation show, against an installed hetsched, from a
directory outside the checkout, so that no page can drift from what works.

What runs: in ``README.md`` the ``bash`` blocks of "The two commands" and "A short tour"; in any
other page (``docs/getting-started.md``, the tutorials, how-to and paper pages) every ``bash`` block
and every ``python`` block; a block of any other language with a ``title="NAME"`` (a file the
page shows, e.g. a sweep spec) is written as that file before the steps after it. In a ``bash`` block each ``hetsched`` line is a command (``pip`` and
other lines are the installer's, not the tour's); a ``python`` block runs whole, as a script. A
fragment that is not meant to run is fenced ``py`` or ``text``, never ``python`` or ``bash``.

Each page runs in a scratch directory of its own, its steps in order (later ones read what
earlier ones wrote), with the installed ``hetsched`` and its Python first on PATH. A command passes
when it exits 0 (or 1 where its comment says it exits 1), or when it is still at work after
``--cap`` seconds: then its process group gets SIGTERM (as a batch scheduler sends it) and it
must exit 143, hetsched's exit on SIGTERM, with every process of the group gone within a minute
(it had parsed its arguments and found its inputs, which a command does in its first second).
A command whose comment says how long it takes (``# about 30 s``), because a later step reads
what it writes, may run three times that before it is stopped. A
``python`` block must exit 0 within ``--python-cap`` seconds. Prints one line per step and a
closing count; exits 1 if any failed.

    python .ci/doc_commands.py README.md docs/getting-started.md docs/tutorials/*.md \
        --bin VENV/bin [--cap 15] [--python-cap 180]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

#: the README's sections whose commands run (the rest of a page runs whole)
README_SECTIONS = ("## The two commands", "## A short tour")
#: how long a command may take to stop after SIGTERM before it counts as hanging
STOP_SECONDS = 60.0
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", flags=re.S | re.M)
TITLE = re.compile(r'title="([\w.-]+)"')
ABOUT = re.compile(r"\babout (\d+) s\b")


class Step(NamedTuple):
    """One thing a page asks a reader to run: a ``hetsched`` command or a Python script."""

    kind: str  # "bash", "python" or "file" (a block with a title: written under that name)
    code: str
    comment: str = ""  # a command's comment; a file's name


def _sections(text: str, titles: tuple[str, ...]) -> str:
    parts = []
    for title in titles:
        start = text.index(title)
        end = text.find("\n## ", start + len(title))
        parts.append(text[start : end if end >= 0 else len(text)])
    return "\n".join(parts)


def page_steps(text: str, readme: bool = False) -> list[Step]:
    """The steps of a page, in order (``readme``: only the README's tour sections)."""
    if readme:
        text = _sections(text, README_SECTIONS)
    out: list[Step] = []
    for kind, info, block in FENCE.findall(text):
        title = TITLE.search(info)
        if title and kind not in ("bash", "python"):
            out.append(Step("file", block, title.group(1)))
            continue
        if kind == "python":
            out.append(Step("python", block))
            continue
        if kind != "bash":
            continue
        for raw in block.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            command, _, comment = line.partition("  #")
            command = command.strip()
            if command.startswith("pip install . && "):  # the first of the two commands
                command = command.removeprefix("pip install . && ")
            if command.startswith("hetsched "):
                out.append(Step("bash", command, comment.strip()))
    return out


def tour_commands(readme: str) -> list[tuple[str, str]]:
    """(command, comment) for every ``hetsched`` line of the README's tour sections."""
    return [(s.code, s.comment) for s in page_steps(readme, readme=True) if s.kind == "bash"]


def _group_ends(pgid: int, seconds: float) -> bool:
    """Whether every process of the group ``pgid`` has ended within ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _run(step: Step, work: str, env: dict, cap: float, python_cap: float) -> tuple[bool, str]:
    """Run one step in ``work``; (passed, a short account)."""
    if step.kind == "file":
        (Path(work) / step.comment).write_text(step.code, encoding="utf-8")
        return True, "written"
    if step.kind == "python":
        script = Path(work) / "_step.py"
        script.write_text(step.code, encoding="utf-8")
        argv, ok_codes, limit = ["python", str(script)], {0}, python_cap
    else:
        ok_codes = {0, 1} if "exits 1" in step.comment or "exit 1" in step.comment else {0}
        about = ABOUT.search(step.comment)
        argv, limit = ["bash", "-c", step.code], max(cap, 3 * int(about.group(1)) if about else 0)
    proc = subprocess.Popen(
        argv,
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=limit)
        capped = False
    except subprocess.TimeoutExpired:
        # SIGTERM to the step's process group, as a batch scheduler sends it: the shell of a
        # compound line and the hetsched it runs, with its workers
        os.killpg(proc.pid, signal.SIGTERM)
        capped = True
        try:
            _, err = proc.communicate(timeout=STOP_SECONDS)
            if not _group_ends(proc.pid, STOP_SECONDS):
                raise subprocess.TimeoutExpired(argv, STOP_SECONDS)
        except subprocess.TimeoutExpired:  # a step that does not stop: a failure
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            err = (err or "") + f"\nnot stopped {STOP_SECONDS:g} s after SIGTERM"
            capped = False
    code = proc.returncode
    # hetsched's exit on SIGTERM is 143; a compound line's shell dies of the signal (-15); a
    # Python block must finish
    good = code in ok_codes or (
        capped and step.kind == "bash" and code in (143, -signal.SIGTERM)
    )
    what = f"stopped at {limit:g} s" if capped else f"exit {code}"
    if not good:
        what += "\n      " + "\n      ".join((err or "").strip().splitlines()[-5:])
    return good, what


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("pages", type=Path, nargs="+", help="README.md and documentation pages")
    p.add_argument("--bin", required=True, help="the directory of the installed hetsched")
    p.add_argument("--cap", type=float, default=15.0, help="seconds a command may run")
    p.add_argument(
        "--python-cap", type=float, default=180.0, help="seconds a python block may run"
    )
    args = p.parse_args()
    path = f"{Path(args.bin).resolve()}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "MPLBACKEND": "Agg"}
    passed = failed = 0
    for page in args.pages:
        steps = page_steps(page.read_text(encoding="utf-8"), readme=page.name == "README.md")
        print(f"{page}: {len(steps)} steps", flush=True)
        with tempfile.TemporaryDirectory(prefix="hetsched-docs-") as work:
            for step in steps:
                t0 = time.monotonic()
                good, what = _run(step, work, env, args.cap, args.python_cap)
                label = {
                    "bash": step.code,
                    "python": "python: " + step.code.split("\n")[0],
                    "file": "file: " + step.comment,
                }[step.kind]
                print(
                    f"{'ok  ' if good else 'FAIL'} {time.monotonic() - t0:6.1f} s  "
                    f"{what.split(chr(10))[0]:<16} {label}",
                    flush=True,
                )
                if not good:
                    print("\n".join(what.split("\n")[1:]), flush=True)
                passed += good
                failed += not good
    print(f"doc-commands: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
