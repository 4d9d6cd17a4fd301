"""Seeded random placement instances in the style of Harmony's evaluation (Sec. VII.B): servers
like the testbed's (2 GPUs, 8 cores, 50 Gbit/s), jobs drawn from Table I's models with 1-3
workers, half parameter-server jobs with 1-3 parameter servers, half all-reduce, and a skewed
(log-normal) number of epochs. Earlier jobs are placed by load balancing, as a cluster running
an interference-oblivious scheduler would have them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hetsched.harmony import data
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server

GPU_TYPE = "gtx1080ti"


def make_instance(
    name: str,
    n_servers: int,
    jobs: list[dict],
    placed: dict[str, dict] | None = None,
    description: str = "",
    server: dict[str, float] | None = None,
) -> Instance:
    """``jobs``: dicts with id, model, workers, parameter_servers, epochs (optional arrival);
    ``placed``: job id -> {server id: {workers, parameter_servers}} for earlier jobs."""
    server = server or data.SERVER
    gpus_per = int(server["gpu"])
    servers = tuple(
        Server(f"s{s}", tuple(Gpu(f"s{s}g{g}", GPU_TYPE, f"s{s}") for g in range(gpus_per)))
        for s in range(n_servers)
    )
    out_jobs, meta_jobs = [], {}
    for k, j in enumerate(jobs):
        out_jobs.append(
            Job(
                j["id"],
                float(j.get("arrival", k)),
                1.0,
                1,
                1,
                {GPU_TYPE: 1.0},
                {GPU_TYPE: 0.0},
                requested_workers=int(j["workers"]),
                epochs=float(j["epochs"]),
                model=ModelInfo(name=j["model"]),
            )
        )
        entry: dict = {"parameter_servers": int(j["parameter_servers"])}
        if placed and j["id"] in placed:
            entry["placed"] = placed[j["id"]]
        meta_jobs[j["id"]] = entry
    meta = {
        "placement": {
            "servers": {
                s.id: {"cpu": server["cpu"], "bandwidth": server["bandwidth"]} for s in servers
            },
            "jobs": meta_jobs,
        }
    }
    return Instance(
        name,
        Cluster({GPU_TYPE: GpuType(GPU_TYPE, memory_gb=11.0)}, servers),
        tuple(out_jobs),
        description=description,
        metadata=meta,
    )


def random_jobs(
    rng: np.random.Generator,
    count: int,
    prefix: str = "J",
    start: int = 0,
    max_workers: int = 3,
    max_ps: int = 3,
    models: tuple[str, ...] = data.MODELS,
) -> list[dict]:
    out = []
    for k in range(count):
        ps = bool(rng.random() < 0.5)
        out.append(
            {
                "id": f"{prefix}{start + k}",
                "model": models[int(rng.integers(len(models)))],
                "workers": int(rng.integers(1, max_workers + 1)),
                "parameter_servers": int(rng.integers(1, max_ps + 1)) if ps else 0,
                "epochs": float(max(1, round(rng.lognormal(np.log(8.0), 1.0)))),
            }
        )
    return out


def random_instance(
    seed: int | np.random.Generator,
    n_servers: int = 6,
    n_new: int = 3,
    n_old: int = 3,
    max_workers: int = 3,
    max_ps: int = 3,
    name: str | None = None,
) -> Instance:
    """One interval: ``n_old`` earlier jobs (placed by load balancing; those that do not fit are
    dropped) and ``n_new`` arriving jobs."""
    from hetsched.harmony.heuristics import place_by_rule
    from hetsched.harmony.problem import placement_view

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    old = random_jobs(rng, n_old, "E", 0, max_workers, max_ps)
    new = random_jobs(rng, n_new, "J", 0, max_workers, max_ps)
    label = name or f"placement-{n_servers}s-{n_old}+{n_new}"
    placed: dict[str, dict] = {}
    if old:
        first = make_instance(label, n_servers, old)
        plan = place_by_rule(placement_view(first), "load-balancing")
        placed = {
            j: {s: {"workers": w, "parameter_servers": p} for s, (w, p) in on.items()}
            for j, on in plan.jobs.items()
        }
        old = [j for j in old if j["id"] in placed]
    inst = make_instance(label, n_servers, old + new, placed)
    return replace(
        inst,
        description=f"random placement interval: {n_servers} servers, {len(old)} earlier jobs, "
        f"{n_new} new jobs (hetsched.harmony.generate)",
    )
