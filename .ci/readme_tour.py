"""Run the README's commands against an installed hetsched, from a directory outside the checkout.

The commands are read from the README itself (the ``bash`` blocks of "The two commands" and
"A five-minute tour"; ``pip``/``pytest`` lines are the installer's, not the tour's), so the README
cannot drift from what works. Each command runs in one scratch directory, in order (later ones
read what earlier ones wrote), with the installed ``hetsched`` first on PATH. A command passes
when it exits 0 (or 1 where its comment says it exits 1), or when it is still at work after
``--cap`` seconds: then its process group gets SIGTERM (as a batch scheduler sends it) and it
must exit 143, hetsched's exit on SIGTERM, with every process of the group gone within a minute
(it had parsed its arguments and found its inputs, which a command does in its first second). Prints one line per command
and a closing count; exits 1 if any failed.

    python .ci/readme_tour.py README.md --bin VENV/bin [--cap 15]
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

SECTIONS = ("## The two commands", "## A five-minute tour")
#: how long a command may take to stop after SIGTERM before it counts as hanging
STOP_SECONDS = 60.0


def tour_commands(readme: str) -> list[tuple[str, str]]:
    """(command, comment) for every ``hetsched`` line of the README's tour sections."""
    out: list[tuple[str, str]] = []
    for title in SECTIONS:
        start = readme.index(title)
        end = readme.find("\n## ", start + len(title))
        section = readme[start : end if end >= 0 else len(readme)]
        for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
            for raw in block.splitlines():
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                command, _, comment = line.partition("  #")
                command = command.strip()
                if command.startswith("pip install . && "):  # the first of the two commands
                    command = command.removeprefix("pip install . && ")
                if command.startswith("hetsched "):
                    out.append((command, comment.strip()))
    return out


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


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("readme", type=Path)
    p.add_argument("--bin", required=True, help="the directory of the installed hetsched")
    p.add_argument("--cap", type=float, default=15.0, help="seconds a command may run")
    args = p.parse_args()
    commands = tour_commands(args.readme.read_text(encoding="utf-8"))
    env = {**os.environ, "PATH": f"{Path(args.bin).resolve()}{os.pathsep}{os.environ['PATH']}"}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="hetsched-tour-") as work:
        for command, comment in commands:
            ok_codes = {0, 1} if "exits 1" in comment or "exit 1" in comment else {0}
            t0 = time.monotonic()
            proc = subprocess.Popen(
                ["bash", "-c", command],
                cwd=work,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            try:
                _, err = proc.communicate(timeout=args.cap)
                capped = False
            except subprocess.TimeoutExpired:
                # SIGTERM to the command's process group, as a batch scheduler sends it: the
                # shell of a compound line and the hetsched it runs, with its workers
                os.killpg(proc.pid, signal.SIGTERM)
                capped = True
                try:
                    _, err = proc.communicate(timeout=STOP_SECONDS)
                    if not _group_ends(proc.pid, STOP_SECONDS):
                        raise subprocess.TimeoutExpired(command, STOP_SECONDS)
                except subprocess.TimeoutExpired:  # a command that does not stop: a failure
                    os.killpg(proc.pid, signal.SIGKILL)
                    _, err = proc.communicate()
                    err = (err or "") + f"\nnot stopped {STOP_SECONDS:g} s after SIGTERM"
                    capped = False
            seconds = time.monotonic() - t0
            code = proc.returncode
            # hetsched's exit on SIGTERM is 143; a compound line's shell dies of the signal (-15)
            good = code in ok_codes or (capped and code in (143, -signal.SIGTERM))
            what = f"stopped at {args.cap:g} s" if capped else f"exit {code}"
            print(
                f"{'ok  ' if good else 'FAIL'} {seconds:6.1f} s  {what:<16} {command}", flush=True
            )
            if not good:
                failed += 1
                print("      " + "\n      ".join(err.strip().splitlines()[-5:]), flush=True)
    print(f"readme-tour: {len(commands) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
