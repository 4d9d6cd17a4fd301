"""A status line on stderr for commands that run longer than a few seconds.

:class:`Heartbeat` says, after ``first`` seconds and then every ``every`` seconds, that the
command is still running, how long it has run and its time limit: on a terminal as one line
rewritten in place, elsewhere (logs, CI) as a line each time. stdout stays clean for ``--json``.
Commands with progress of their own (sweep's bar, bench's per-run lines) add to it.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Heartbeat:
    def __init__(
        self,
        label: str,
        limit: float | None = None,
        first: float = 5.0,
        every: float = 10.0,
        stream: TextIO | None = None,
    ):
        self.label, self.limit, self.first, self.every = label, limit, first, every
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def _run(self) -> None:
        t0 = time.perf_counter()
        wait = self.first
        tty = getattr(self.stream, "isatty", lambda: False)()
        while not self._stop.wait(wait):
            elapsed = time.perf_counter() - t0
            limit = "" if self.limit is None else f" (time limit {self.limit:g} s)"
            line = f"hetsched {self.label}: running, {elapsed:.0f} s{limit}"
            try:
                self.stream.write(("\r" + line) if tty else line + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # the stream went away: stop quietly
                return
            self._shown = tty
            wait = self.every

    def __enter__(self) -> "Heartbeat":
        self._thread = threading.Thread(target=self._run, name="hetsched-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self._shown:
            try:
                self.stream.write("\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass
