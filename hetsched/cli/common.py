"""What every command module shares: the exit codes and how numbers and violations are printed."""

from __future__ import annotations

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL, EXIT_INSTALL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT: stopped by Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM: stopped by `kill`


def one_line(text: str) -> str:
    """``text`` on one line: a line break inside it (a file name may hold one) is shown escaped."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.4g}%" if pct else f"{x:.10g}"


def print_violations(violations) -> None:
    for v in violations:
        print(f"  [{v.kind}] {v.message}")
