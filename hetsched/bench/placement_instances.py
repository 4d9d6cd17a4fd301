"""The shipped placement intervals (``instances/placement/``) and their proven optima.

``write_benchmarks(dir)`` regenerates the files from fixed seeds and records in
``manifest.json`` each interval's optimum of eq. (1), with waiting allowed and with every new
job placed (``place_all``), proven by the MILP on HiGHS and, where the interval is small enough,
by enumeration too (the two must agree, else nothing is written)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hetsched.core.errors import HetschedError
from hetsched.core.jsonio import save_json
from hetsched.harmony.exhaustive import exhaustive_placement
from hetsched.harmony.generate import random_instance
from hetsched.harmony.problem import placement_view
from hetsched.instance.io import dump_instance, instance_hash

# name -> (seed, servers, new jobs, earlier jobs, max workers, max parameter servers)
BENCHMARKS = {
    "small-3s-a": (201, 3, 2, 2, 2, 2),
    "small-3s-b": (202, 3, 3, 1, 2, 2),
    "small-2s-c": (203, 2, 3, 0, 2, 1),
    "testbed-6s-a": (101, 6, 3, 3, 3, 3),
    "testbed-6s-b": (102, 6, 3, 3, 3, 3),
    "testbed-6s-c": (104, 6, 4, 4, 3, 3),
}
ENUMERATION_LIMIT = 300_000


def prove(instance, time_limit: float = 60.0) -> dict:
    """The optimum with and without ``place_all`` (None when infeasible), and the methods."""
    from hetsched.exact.solve import solve
    from hetsched.solvers import Status

    out: dict = {"methods": ["harmony-placement/highs"]}
    for key, opts in (("optimum", None), ("optimum_place_all", {"place_all": True})):
        res = solve(instance, "harmony-placement", "highs", time_limit=time_limit, options=opts)
        if res.status == Status.INFEASIBLE:
            out[key] = None
        elif res.status == Status.OPTIMAL:
            out[key] = res.objective
        else:
            raise HetschedError(f"{instance.name}: {key} not proven ({res.status.value})")
    try:
        _, value = exhaustive_placement(placement_view(instance), limit=ENUMERATION_LIMIT)
    except HetschedError:
        return out
    if abs(value - out["optimum"]) > 1e-9 * max(1.0, value):
        raise HetschedError(
            f"{instance.name}: MILP {out['optimum']} and enumeration {value} disagree"
        )
    out["methods"].append("enumeration")
    return out


def write_benchmarks(directory: str | Path) -> dict:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"objective": "Harmony (ToN'22) eq. (1), sum_n c_n / e_n", "instances": {}}
    for name, (seed, servers, new, old, w, p) in BENCHMARKS.items():
        inst = random_instance(
            seed, n_servers=servers, n_new=new, n_old=old, max_workers=w, max_ps=p
        )
        inst = replace(inst, name=f"placement-{name}")
        path = directory / f"{name}.json"
        dump_instance(inst, path)
        manifest["instances"][path.name] = {"hash": instance_hash(inst), **prove(inst)}
    save_json(directory / "manifest.json", manifest, indent=1)
    return manifest
