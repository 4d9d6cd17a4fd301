"""Command line: ``hetsched COMMAND``. This package parses arguments and prints; the work is in the
library. One module per group of commands, each with ``register(sub)``:
:mod:`~hetsched.cli.exact` (solve, heuristic, validate, models, schema, generate, certify),
:mod:`~hetsched.cli.audit`, :mod:`~hetsched.cli.gavel` (allocate, import-gavel),
:mod:`~hetsched.cli.hadar` (online), :mod:`~hetsched.cli.sim` (simulate, compare),
:mod:`~hetsched.cli.bench`, :mod:`~hetsched.cli.research` (show, export, solvers, sweep, docs),
:mod:`~hetsched.cli.harmony` (place, place-sim), :mod:`~hetsched.cli.similarity` (similarity-sim).

Exit codes (:mod:`hetsched.cli.common`): 0 success; 1 no valid result (infeasible, solver error,
invalid solution); 2 bad input (one line on stderr naming the file, JSON path and reason);
3 internal error; 4 broken installation (a shipped file or module is missing); 130 interrupted
(Ctrl-C), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from hetsched.cli import (
    audit,
    bench,
    exact,
    gavel,
    hadar,
    harmony,
    research,
    sim,
    similarity,
)
from hetsched.cli.args import check_outputs
from hetsched.cli.common import (
    EXIT_FAIL,
    EXIT_INPUT,
    EXIT_INSTALL,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    one_line,
)
from hetsched.core.deadline import raise_or_defer, swallowed_signals_redelivered
from hetsched.core.errors import HetschedError, InstallationError

GROUPS = (exact, audit, gavel, hadar, sim, bench, research, harmony, similarity)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hetsched")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from hetsched import __version__

        return __version__


class _Parser(argparse.ArgumentParser):
    """An argument error is one line on stderr (and exit 2), as bad input is everywhere else;
    ``--help`` shows the usage."""

    def error(self, message: str):
        self.exit(EXIT_INPUT, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``hetsched`` parser: the top-level options and every group's commands.

    With ``command``, only that command's group is built in full; every other command is a
    name and its help line (``COMMANDS``), so that parsing imports only what that command needs
    (``hetsched --help`` imports none of the engine)."""
    p = _Parser(prog="hetsched", description="Scheduling DL jobs on heterogeneous GPU clusters.")
    p.add_argument("--version", action="version", version=f"hetsched {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        if command is None or command in group.COMMANDS:
            group.register(sub)
        else:
            for name, line in group.COMMANDS.items():
                sub.add_parser(name, help=line, add_help=False)
    p.set_defaults(
        build_parser=build_parser
    )  # `docs` renders this parser's help without importing the CLI
    return p


#: commands that can run for more than a few seconds: a status line on stderr while they run
#: (sweep has its own progress bar)
LONG_COMMANDS = frozenset(
    {
        "solve",
        "heuristic",
        "audit",
        "allocate",
        "online",
        "simulate",
        "compare",
        "certify",
        "bench",
        "place",
        "place-sim",
        "similarity-sim",
        "export",
    }
)
#: commands whose --time-limit bounds the whole command (elsewhere it bounds each run or trial)
WHOLE_COMMAND_LIMIT = frozenset({"solve", "heuristic", "allocate"})


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: it takes the same path (every child stopped, what
    is stored stays stored) and exits 143."""


def _terminate(terminated: list[bool]) -> None:
    """SIGTERM's handler: note it, then take Ctrl-C's path (:class:`Terminated`)."""
    terminated.append(True)
    raise_or_defer(Terminated())  # inside a compiled kernel: when it returns


def _interrupt(interrupted: list[bool]) -> None:
    """SIGINT's handler: Python's own (KeyboardInterrupt), noted, so that an interrupt raised
    where Python ignores exceptions (a ``__del__``, a weakref callback during garbage
    collection) still ends in exit 130: an audit once finished its trials and exited 0."""
    interrupted.append(True)
    raise_or_defer(KeyboardInterrupt())  # inside a compiled kernel: when it returns


def _unwritten(args: argparse.Namespace) -> str:
    """What an interrupted command did not write (outputs are written whole or not at all)."""
    files = [
        f"{o.option} {getattr(args, o.dest)}"
        for o in getattr(args, "outputs", ())
        if o.kind == "file" and getattr(args, o.dest, None) is not None
    ]
    return f"; nothing written to {', '.join(files)} (a file there is unchanged)" if files else ""


def _run_command(args: argparse.Namespace) -> int:
    """The command's function; a long command with its heartbeat on stderr."""
    if args.command not in LONG_COMMANDS:
        return args.func(args)
    from hetsched.core.progress import Heartbeat

    limit = getattr(args, "time_limit", None) if args.command in WHOLE_COMMAND_LIMIT else None
    with Heartbeat(args.command, limit):
        return args.func(args)


def _command(argv: Sequence[str]) -> str:
    """The command named on the command line ('' if none): its first word not an option."""
    return next((word for word in argv if not word.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command(argv)).parse_args(argv)
    import signal

    terminated: list[bool] = []  # set by SIGTERM: the exit is 143 wherever the signal landed
    import threading

    interrupted: list[bool] = []  # set by SIGINT: the exit is 130 wherever it landed
    previous = None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: _terminate(terminated))
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous = signal.signal(signal.SIGINT, lambda signum, frame: _interrupt(interrupted))
    try:
        check_outputs(args)  # an output that would destroy an input or cannot be written: exit 2
        # a signal swallowed in a __del__ is delivered again: the command stops, not at its end
        with swallowed_signals_redelivered(
            {Terminated: signal.SIGTERM, KeyboardInterrupt: signal.SIGINT}
        ):
            code = _run_command(args)
        if terminated or interrupted:  # the signal was swallowed where Python ignores exceptions
            print(
                "hetsched: terminated" if terminated else "hetsched: interrupted", file=sys.stderr
            )
            return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
        return code
    except InstallationError as exc:  # hetsched itself is incomplete: not the user's input
        print(f"hetsched: installation error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_INSTALL
    except HetschedError as exc:  # InputError included: file, JSON path, reason
        print(f"hetsched: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt as exc:
        term = isinstance(exc, Terminated)
        print(
            f"hetsched: {'terminated' if term else 'interrupted'}{_unwritten(args)}",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if term else EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_OK
    except Exception as exc:  # a bug: one line, the traceback only on request
        if terminated or interrupted:  # the signal landed where a library turned it into
            # another error (compiled code returns a SystemError for a handler that raised)
            word = "terminated" if terminated else "interrupted"
            print(f"hetsched: {word}{_unwritten(args)}", file=sys.stderr)
            return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
        if os.environ.get("HETSCHED_DEBUG"):
            raise
        print(
            f"hetsched: internal error: {exc.__class__.__name__}: {one_line(str(exc))} (set HETSCHED_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        if previous is not None:  # a caller running main() in-process gets Python's own back
            signal.signal(signal.SIGINT, previous)


def run() -> None:
    """The ``hetsched`` script: :func:`main`, then exit with its code. A solver run that was told
    to stop by a signal and has not yet (a presolve reduction that reads no clock) would make the
    interpreter's normal exit abort in HiGHS's destructors (exit 134): the output is flushed
    and the process ends at once instead (:mod:`hetsched.core.interruptible`)."""
    code = main()
    from hetsched.core.interruptible import runs_left

    if runs_left():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


__all__ = [
    "main",
    "run",
    "build_parser",
    "EXIT_OK",
    "EXIT_FAIL",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_INSTALL",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
]
