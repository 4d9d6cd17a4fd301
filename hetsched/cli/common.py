"""What every command module shares: the exit codes and how numbers and violations are printed."""

from __future__ import annotations

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL, EXIT_INSTALL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, also for SIGTERM: stopped on request


def fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.4g}%" if pct else f"{x:.10g}"


def print_violations(violations) -> None:
    for v in violations:
        print(f"  [{v.kind}] {v.message}")
