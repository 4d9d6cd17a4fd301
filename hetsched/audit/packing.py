"""``packing``: the AppSci'24 paper applies its similarity policy "to identify the optimal job
combinations that maximise job throughput" (Sec. 4.3) with Algorithm 3. Audited: Algorithm 3's
packing (:func:`hetsched.similarity.packing.greedy_packing`) against the packing of largest total normalized
throughput (:func:`hetsched.similarity.packing.optimal_packing`, cross-checked by ``models/job_packing.py``).
Ratio = optimum / Algorithm 3's value (both recomputed by the independent check); the claimed
bound is 1 (Algorithm 3 is optimal). Check ``gain_only``: the same with Algorithm 3 repaired
to skip pairs that lower the round's value (optimum / repaired value; > 1 means the order of
the scheduled jobs still costs throughput). Throughputs are Gavel's measured single-GPU rows and pairs.

Instances: 1-4 GPUs (K80 12 GB, P100 16 GB, V100 16 GB), each running one scheduled job alone,
and 1-4 queued jobs; each job a single-GPU row of Gavel's table with a memory footprint of
1-12 GB (drawn; the table has no memory data).
"""

from __future__ import annotations

import numpy as np

from hetsched.audit.engine import Claim, Evaluation, Profile
from hetsched.instance.io import instance_to_dict, parse_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.similarity.packing import check_packing, greedy_packing, optimal_packing, packing_view
from hetsched.similarity.packing.problem import METRICS, _table

MEMORY = {"k80": 12.0, "p100": 16.0, "v100": 16.0}
TYPES = tuple(MEMORY)
PROFILES = {
    "ci": Profile(trials=200, max_tasks=4, time_limit=10.0),
    "deep": Profile(trials=5000, max_tasks=6, time_limit=10.0),
}


def single_gpu_models() -> list[str]:
    return sorted(m for m, s in _table(None).isolated["v100"] if s == 1)


def make_instance(
    gpu_types: list[str],
    solo_models: list[str],
    queue_models: list[str],
    memory: list[float],
    name: str = "packing",
) -> Instance:
    """GPU g runs job S<g> (``solo_models[g]``) alone; ``queue_models`` wait; memory per job in that order."""
    gpus = tuple(Gpu(f"g{g}", t, "s0") for g, t in enumerate(gpu_types))
    models = list(solo_models) + list(queue_models)
    ids = [f"S{g}" for g in range(len(solo_models))] + [f"Q{q}" for q in range(len(queue_models))]
    jobs = tuple(
        Job(
            jid,
            float(k),
            1.0,
            1,
            1,
            {t: 1.0 for t in TYPES},
            {t: 0.0 for t in TYPES},
            requested_workers=1,
            memory_gb=float(memory[k]),
            model=ModelInfo(name=models[k]),
        )
        for k, jid in enumerate(ids)
    )
    return Instance(
        name,
        Cluster({t: GpuType(t, memory_gb=MEMORY[t]) for t in TYPES}, (Server("s0", gpus),)),
        jobs,
        metadata={"packing": {"scheduled": {f"S{g}": f"g{g}" for g in range(len(solo_models))}}},
    )


def sample(rng: np.random.Generator, prof: Profile) -> Instance:
    models = single_gpu_models()
    n_gpus, n_queue = (
        int(rng.integers(1, prof.max_tasks + 1)),
        int(rng.integers(1, prof.max_tasks + 1)),
    )
    pick = lambda n: [models[int(i)] for i in rng.integers(len(models), size=n)]  # noqa: E731
    memory = (np.round(rng.uniform(1, 12, size=n_gpus + n_queue) * 2) / 2).tolist()
    return make_instance(
        [TYPES[int(i)] for i in rng.integers(3, size=n_gpus)], pick(n_gpus), pick(n_queue), memory
    )


def mutate(inst: Instance, rng: np.random.Generator, prof: Profile) -> Instance:
    """Change one job's model or memory, one GPU's type, or add a queued job."""
    d = instance_to_dict(inst)
    kind = rng.choice(["model", "memory", "gpu", "add"])
    job = d["jobs"][int(rng.integers(len(d["jobs"])))]
    if kind == "model":
        models = single_gpu_models()
        job["model"]["name"] = models[int(rng.integers(len(models)))]
    elif kind == "memory":
        job["memory_gb"] = float(
            min(12.0, max(0.5, job["memory_gb"] + 0.5 * int(rng.integers(-4, 5))))
        )
    elif kind == "gpu":
        gpu = d["cluster"]["servers"][0]["gpus"][
            int(rng.integers(len(d["cluster"]["servers"][0]["gpus"])))
        ]
        gpu["type"] = TYPES[int(rng.integers(3))]
    elif sum(1 for j in d["jobs"] if j["id"].startswith("Q")) < prof.max_tasks:
        new = dict(job, id=f"Q{len(d['jobs'])}", arrival=float(len(d["jobs"])))
        new["model"] = dict(job["model"])
        d["jobs"].append(new)
    return parse_instance(d, source="mutation")


def evaluate(inst: Instance, prof: Profile) -> Evaluation:
    view = packing_view(inst)
    greedy, best = greedy_packing(view), optimal_packing(view)
    repaired = greedy_packing(view, gain_only=True)
    g, o, r = check_packing(inst, greedy), check_packing(inst, best), check_packing(inst, repaired)
    assert g.valid and o.valid and r.valid, (g.violations, o.violations, r.violations)

    def over(x: float) -> float:
        return o.objective / x if x > 0 else (np.inf if o.objective > 0 else 1.0)

    return Evaluation(
        float(over(g.objective)),
        1.0,
        {"gain_only": float(over(r.objective))},
        {
            "greedy": [list(p) for p in greedy.pairs],
            "optimal": [list(p) for p in best.pairs],
            "greedy_value": g.objective,
            "optimal_value": o.objective,
        },
    )


def reductions(inst: Instance) -> list[Instance]:
    """Drop one queued job, or one GPU with its scheduled job."""
    d = instance_to_dict(inst)
    out = []
    for k, job in enumerate(d["jobs"]):
        if job["id"].startswith("Q") and sum(1 for j in d["jobs"] if j["id"].startswith("Q")) > 1:
            e = instance_to_dict(inst)
            del e["jobs"][k]
            out.append(parse_instance(e, source="shrink"))
    sched = d["metadata"]["packing"]["scheduled"]
    if len(sched) > 1:
        for jid, gid in sched.items():
            e = instance_to_dict(inst)
            e["jobs"] = [j for j in e["jobs"] if j["id"] != jid]
            e["cluster"]["servers"][0]["gpus"] = [
                g for g in e["cluster"]["servers"][0]["gpus"] if g["id"] != gid
            ]
            del e["metadata"]["packing"]["scheduled"][jid]
            out.append(parse_instance(e, source="shrink"))
    return out


def size(inst: Instance) -> tuple:
    return (len(inst.jobs), len(inst.gpus))


def read(inst: Instance, reading: dict[str, str]) -> Instance:
    """The instance with ``metadata.packing.metric`` = the reading's (``hetsched.similarity.packing``)."""
    d = instance_to_dict(inst)
    d["metadata"]["packing"]["metric"] = reading["metric"]
    return parse_instance(d, source=inst.name)


CLAIM = Claim(
    name="packing",
    statement="Algorithm 3 (AppSci'24) finds the job combinations of maximum total throughput "
    "(normalized per job, or raw iterations/s: the reading 'metric')",
    sample=sample,
    mutate=mutate,
    evaluate=evaluate,
    checks=("gain_only",),
    profiles=PROFILES,
    reductions=reductions,
    size=size,
    readings={"metric": METRICS},
    read=read,
)
