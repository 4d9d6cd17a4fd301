"""Ratio histograms of a bound audit: every trial's ratio over its bound (> 1 violates the
claim), and each named proof step's LHS/RHS, read from the audit's ``trials.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hetsched.core.errors import InputError
from hetsched.plots.style import pyplot, save


def audit_ratios(report: dict, source: str = "report") -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(ratio / bound per evaluated trial, {check: LHS/RHS per trial}) from the report's log."""
    log = Path(report.get("log", ""))
    if not log.is_file():
        raise InputError(source, "$.log", f"the audit's trial log is missing ({log})")
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    rows = [r for r in rows[: report.get("trials", len(rows))] if r.get("ratio") is not None]
    ratio = np.array([r["ratio"] / r["bound"] for r in rows], dtype=float)
    checks: dict[str, list[float]] = {}
    for r in rows:
        for c, v in r.get("checks", {}).items():
            checks.setdefault(c, []).append(v)
    return ratio, {c: np.array(v, dtype=float) for c, v in checks.items()}


def draw_audit_histogram(report: dict, path: str | Path, source: str = "report") -> Path:
    """One panel for the claim (ratio / bound) and one per proof step; the line at 1 is the bound."""
    plt = pyplot()
    ratio, checks = audit_ratios(report, source)
    panels = [("claim: ALG/OPT over the bound", ratio)] + [
        (f"step {c}: LHS/RHS", v) for c, v in checks.items()
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels)), squeeze=False)
    for ax, (label, values) in zip(axes[:, 0], panels):
        finite = values[np.isfinite(values)]
        over = int(np.sum(finite > 1 + 1e-9))
        bins = np.histogram_bin_edges(np.append(finite, 1.0), bins=40)
        ax.hist(
            [finite[finite <= 1 + 1e-9], finite[finite > 1 + 1e-9]],
            bins=bins,
            stacked=True,
            color=["tab:blue", "tab:red"],
            alpha=0.85,
            label=["holds", "violates"],
        )
        ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
        ax.set_title(
            f"{label}: {len(finite)} trials, {over} above 1"
            + (f", {len(values) - len(finite)} infinite" if len(finite) < len(values) else ""),
            fontsize=9,
        )
        ax.set_ylabel("trials")
    axes[-1, 0].set_xlabel("ratio (1 = the claimed bound)")
    fig.suptitle(
        f"audit {report.get('claim', '?')} ({report.get('profile', '?')}, seed {report.get('seed', '?')})",
        fontsize=10,
    )
    fig.tight_layout()
    return save(fig, path, dpi=110)
