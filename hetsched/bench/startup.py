"""``hetsched bench startup``: what a command costs before it does its work.

Each command runs in a fresh interpreter (``python -m hetsched.cli ...``), ``repeat`` times; the
result is the median CPU time (user + system of the child) and the median peak resident memory,
beside the same numbers for a bare interpreter (``python -c pass``) run the same way, as the
baseline. A child also reports which of the heavy libraries (Pyomo, OR-Tools, numba, SciPy,
highspy, networkx) the command loaded (issue 21: ``--help``, ``simulate`` and
``allocate --fast`` must not load Pyomo).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from hetsched.bench import write_result
from hetsched.core.resources import shipped

HEAVY = ("pyomo", "ortools", "numba", "scipy", "highspy", "networkx")

#: the peak resident memory of the process since its exec, in MB (Linux: VmHWM); getrusage's
#: maxrss would count memory the child inherited from this process before the exec
PEAK_CODE = (
    "def _peak_mb():\n"
    "    try:\n"
    "        for line in open('/proc/self/status'):\n"
    "            if line.startswith('VmHWM:'):\n"
    "                return int(line.split()[1]) / 1024.0\n"
    "    except OSError:\n"
    "        return None\n"
)
#: a bare interpreter: its report only
_BARE = (
    "import json, sys\n" + PEAK_CODE + "print(json.dumps([0, [], _peak_mb()]), file=sys.stderr)\n"
)


def child_code(sink: str = "io.StringIO()") -> str:
    """A child that runs a command, its standard output going to ``sink`` (a Python expression),
    then reports its exit code, the heavy libraries it loaded and its peak."""
    return (
        "import contextlib, io, json, os, sys\n" + PEAK_CODE + "from hetsched.cli import main\n"
        f"out = {sink}\n"
        "try:\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        code = main(sys.argv[1:])\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        f"loaded = [m for m in {list(HEAVY)!r} if m in sys.modules]\n"
        "print(json.dumps([code, loaded, _peak_mb()]), file=sys.stderr)\n"
    )


#: a command: run it, then report its exit code, the heavy libraries it loaded and its peak
_CHILD = child_code()


def run_child(code: str, argv: list[str]) -> tuple[float, int, list[str], float]:
    """(CPU seconds, exit code, heavy libraries loaded, peak MB) of one fresh interpreter."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    err = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own CPU time (Popen.wait reaps it too)
    proc.returncode = os.waitstatus_to_exitcode(status)
    lines = err.strip().splitlines()
    exit_code, loaded, peak = json.loads(lines[-1])
    return usage.ru_utime + usage.ru_stime, exit_code, loaded, peak


def commands() -> dict[str, list[str]]:
    """The command lines measured, by name."""
    fig1 = str(shipped("instances", "paper", "hadar_fig1.json"))
    fig9 = str(shipped("instances", "paper", "hare_fig9.json"))
    return {
        "--help": ["--help"],
        "solve --help": ["solve", "--help"],
        "simulate hare_fig9 --policy hlas": ["simulate", fig9, "--policy", "hlas"],
        "allocate hadar_fig1 --fast": [
            "allocate",
            fig1,
            "--policy",
            "max-min-fairness",
            "--fast",
        ],
    }


def run_startup_bench(out: str, as_json: bool = False, repeat: int = 5) -> int:
    """Measure every command of :func:`commands` against the bare interpreter; write JSON."""
    base = [run_child(_BARE, []) for _ in range(repeat)]
    base_cpu = statistics.median(b[0] for b in base)
    base_mb = statistics.median(b[3] for b in base)
    rows = []
    for name, argv in commands().items():
        runs = [run_child(_CHILD, argv) for _ in range(repeat)]
        code, loaded = runs[-1][1], runs[-1][2]
        cpu = statistics.median(r[0] for r in runs)
        mb = statistics.median(r[3] for r in runs)
        rows.append(
            {
                "command": f"hetsched {name}",
                "exit": code,
                "cpu_seconds": round(cpu, 3),
                "peak_mb": round(mb, 1),
                "cpu_ratio_to_bare_python": round(cpu / base_cpu, 2) if base_cpu > 0 else None,
                "loaded": loaded,
            }
        )
    result = {
        "suite": "startup",
        "repeat": repeat,
        "bare_python": {"cpu_seconds": round(base_cpu, 3), "peak_mb": round(base_mb, 1)},
        "commands": rows,
    }
    path = write_result(result, out, as_json)
    if not as_json:
        print(f"bare python: {base_cpu:.3f} CPU s, {base_mb:.0f} MB (median of {repeat})")
        for r in rows:
            print(
                f"{r['command']:<45} {r['cpu_seconds']:6.3f} CPU s  {r['peak_mb']:6.0f} MB  "
                f"exit {r['exit']}  loads: {', '.join(r['loaded']) or 'none of ' + '/'.join(HEAVY)}"
            )
        print(f"-> {path}")
    return 0 if all(r["exit"] == 0 for r in rows) else 1
