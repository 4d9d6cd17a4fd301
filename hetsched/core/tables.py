"""Aligned text tables for the CLI: each column as wide as its widest cell, the first ``left``
columns (names) left-aligned and the others right-aligned, so names of any length never shift
the numbers."""

from __future__ import annotations

from typing import Sequence


def aligned(
    header: Sequence[str], rows: Sequence[Sequence[str]], gap: int = 2, left: int = 1
) -> str:
    cells = [list(map(str, header))] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    sep = " " * gap
    return "\n".join(
        sep.join(
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
        ).rstrip()
        for r in cells
    )
