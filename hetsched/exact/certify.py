"""Prove optima of instance files with two independent exact methods and record them.

The manifest (JSON, next to the instances) maps each file to its instance hash, the proven
optimum, and each method's status, objective, bound and time. An entry is written as soon
as its instance is done and skipped on a rerun while the file's hash is unchanged, so an
interrupted run resumes without recomputing; entries not yet proven are tried again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from hetsched.core.errors import HetschedError
from hetsched.core.jsonio import save_json
from hetsched.exact.solve import solve
from hetsched.instance.io import instance_hash, load_instance
from hetsched.solvers import Status

#: the two independent exact methods: a time-indexed MILP on HiGHS and the CP-SAT model
DEFAULT_METHODS: tuple[tuple[str, str], ...] = (("hare-sched-ti", "highs"), ("hare-sched", "cpsat"))


def load_manifest(path: Path) -> dict:
    if not path.exists():
        return {"instances": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def certify(
    files: Sequence[str | Path],
    manifest_path: str | Path,
    time_limit: float = 300.0,
    methods: Sequence[tuple[str, str]] = DEFAULT_METHODS,
    progress=print,
) -> dict:
    """Solve each file with every method; record the optimum if all prove the same value."""
    manifest_path = Path(manifest_path)
    manifest = load_manifest(manifest_path)
    entries = manifest.setdefault("instances", {})
    manifest["methods"] = [f"{m}/{s}" for m, s in methods]
    for f in files:
        f = Path(f)
        key = f.name
        inst = load_instance(f)
        h = instance_hash(inst)
        if (
            key in entries
            and entries[key].get("hash") == h
            and entries[key].get("optimum") is not None
        ):
            progress(f"{key}: already certified ({entries[key]['optimum']})")
            continue
        runs = {}
        for model, solver in methods:
            r = solve(inst, model, solver, time_limit=time_limit)
            runs[f"{model}/{solver}"] = {
                "status": r.status.value,
                "objective": r.objective,
                "bound": r.bound,
                "seconds": round(r.seconds, 3),
            }
        proven = [r["objective"] for r in runs.values() if r["status"] == Status.OPTIMAL.value]
        entry = {
            "hash": h,
            "tasks": inst.n_tasks,
            "gpus": len(inst.gpus),
            "jobs": len(inst.jobs),
            "runs": runs,
        }
        if len(proven) == len(methods):
            if max(proven) - min(proven) > 1e-6 * max(1.0, abs(max(proven))):
                raise HetschedError(f"{key}: exact methods disagree: {runs}")
            entry["optimum"] = min(proven)
        else:
            entry["optimum"] = None
        entries[key] = entry
        save_json(manifest_path, manifest, indent=1, sort_keys=True)  # a kill keeps the old one
        progress(
            f"{key}: optimum {entry['optimum']} "
            + " ".join(f"{k}={v['seconds']}s" for k, v in runs.items())
        )
    return manifest
