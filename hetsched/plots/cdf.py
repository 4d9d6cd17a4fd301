"""The JCT CDF of several policies on one workload (log-scaled time axis)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hetsched.plots.style import pyplot, save


def draw_jct_cdf(jcts: dict[str, list[float]], path: str | Path, title: str = "") -> Path:
    """One step curve per policy: the fraction of jobs whose JCT is <= x."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for policy, values in jcts.items():
        x = np.sort(np.asarray(values, dtype=float))
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=policy)
    ax.set_xscale("log")
    ax.set_xlabel("JCT (s)")
    ax.set_ylabel("fraction of jobs")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return save(fig, path, dpi=120)
