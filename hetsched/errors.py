"""Errors a user can cause, each naming where the problem is and why."""

from __future__ import annotations


class HetschedError(Exception):
    """Base class for every error hetsched raises on purpose."""


class InputError(HetschedError):
    """Bad user input: a file, a JSON path inside it, and the reason.

    ``str(err)`` is the one line the CLI prints, e.g.
    ``small-03.json: $.jobs[3].train_time.v100: must be > 0 (got -2)``.
    """

    def __init__(self, source: str, path: str | None, reason: str) -> None:
        self.source = source
        self.path = path
        self.reason = reason
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {reason}")


class SolverError(HetschedError):
    """A solver failed or is unavailable (not a property of the instance)."""


class InstallationError(HetschedError):
    """hetsched itself is incomplete (a shipped file or module is missing): not the user's input."""
