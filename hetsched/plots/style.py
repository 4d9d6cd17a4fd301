"""What every plot shares: a headless matplotlib and a stable colour per job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetsched.core.errors import HetschedError
from hetsched.core.files import atomic_path


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (no display needed)."""
    try:
        import matplotlib
    except ImportError as e:  # pragma: no cover - matplotlib is a dependency
        raise HetschedError("plotting needs matplotlib (pip install matplotlib)") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: str | Path, dpi: int) -> Path:
    """Write ``fig`` to ``path`` (format from its suffix) whole or not at all, and close it."""
    out = Path(path)
    try:
        with atomic_path(out) as tmp:
            fig.savefig(tmp, dpi=dpi)
    finally:
        pyplot().close(fig)
    return out


def job_colours(job_ids: list[str]) -> dict[str, tuple]:
    """One colour per job, in instance order (tab20, cycling)."""
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return {j: cmap(k % 20) for k, j in enumerate(job_ids)}
