"""Claims of Hadar (2024) audited on small instances.

* ``hadar-dp``: DP_allocation (Algorithm 2, payoff reading, see hetsched/hadar/online.py) finds
  the best total payoff over every include/skip choice of the queue in one round. The ratio is
  brute force / DP (1 when the DP is exact; the claimed bound is 1).
  Check ``find_alloc_best``: "FIND_ALLOC selects the best possible allocation" (Sec. III.C),
  as LHS/RHS = the best total payoff over every include/skip choice *and every gang* of each
  taken job (any W_j GPUs within capacity, priced as the DP prices them) / DP_allocation's.
"""

from __future__ import annotations

import itertools

import numpy as np

from hetsched.audit.engine import Claim, Evaluation, Profile
from hetsched.hadar.dp_allocation import dp_allocation, find_alloc
from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.view import hadar_job, hadar_view
from hetsched.instance.io import instance_to_dict, parse_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Server

TYPES = ("k80", "p100", "v100")
PROFILES = {
    "ci": Profile(trials=20, max_tasks=6, time_limit=10.0),
    "deep": Profile(trials=400, max_tasks=9, time_limit=30.0),
}


def sample(rng: np.random.Generator, prof: Profile) -> Instance:
    """1-3 machines with 0-2 GPUs of each type, 2..max_tasks queued jobs of 1-3 GPUs."""
    servers = []
    for h in range(int(rng.integers(1, 4))):
        gpus = tuple(
            Gpu(f"m{h}-{t}-{i}", t, f"m{h}") for t in TYPES for i in range(int(rng.integers(0, 3)))
        )
        if gpus:
            servers.append(Server(f"m{h}", gpus))
    if not servers:
        servers = [Server("m0", (Gpu("m0-v100-0", "v100", "m0"),))]
    n_gpus = sum(len(s.gpus) for s in servers)
    jobs = tuple(
        hadar_job(
            f"J{j}",
            0.0,
            TYPES,
            workers=int(rng.integers(1, min(3, n_gpus) + 1)),
            epochs=float(rng.integers(2, 60)),
            throughput=dict(zip(TYPES, rng.integers(1, 40, size=3).astype(float).tolist())),
        )
        for j in range(int(rng.integers(2, prof.max_tasks + 1)))
    )
    return Instance(
        "hadar-dp",
        Cluster({t: GpuType(t) for t in TYPES}, tuple(servers)),
        jobs,
        metadata={"hadar": {"slot_seconds": 1.0, "progress": "bottleneck"}},
    )


def mutate(inst: Instance, rng: np.random.Generator, prof: Profile) -> Instance:
    """Change one job's throughput on one type, its epochs or its gang size."""
    d = instance_to_dict(inst)
    job = d["jobs"][int(rng.integers(len(d["jobs"])))]
    kind = rng.choice(["throughput", "epochs", "workers"])
    if kind == "throughput":
        t = TYPES[int(rng.integers(3))]
        job["throughput"][t] = float(max(1, job["throughput"][t] + rng.integers(-10, 11)))
    elif kind == "epochs":
        job["epochs"] = float(max(1, job["epochs"] + rng.integers(-20, 21)))
    else:
        n_gpus = sum(len(s["gpus"]) for s in d["cluster"]["servers"])
        job["requested_workers"] = int(rng.integers(1, min(3, n_gpus) + 1))
        job["tasks_per_round"] = job["requested_workers"]
    return parse_instance(d, source="mutation")


def brute_force_payoff(
    v, queue: list[int], free0: np.ndarray, prices, remaining: np.ndarray, t: int
) -> float:
    """The best total payoff over every include/skip vector, jobs in queue order, each taking
    FIND_ALLOC's gang at the prices of what is allocated before it (what DP_allocation searches)."""
    best = 0.0
    for mask in itertools.product((0, 1), repeat=len(queue)):
        free, total, ok = free0.copy(), 0.0, True
        for take, j in zip(mask, queue):
            if take:
                cand = find_alloc(v, j, free, v.capacity - free, prices, float(remaining[j]), t)
                if cand is None:
                    ok = False
                    break
                for h, r, n in cand.alloc:
                    free[h, r] -= n
                total += cand.payoff
        if ok:
            best = max(best, total)
    return best


def best_over_all_gangs(
    v, queue: list[int], free0: np.ndarray, prices, remaining: np.ndarray, t: int
) -> float:
    """max total payoff over include/skip and every gang of each taken job, jobs in queue order, each
    priced at the allocation levels before it (memoized on (index, free GPUs); tiny clusters only)."""
    from functools import lru_cache

    from hetsched.hadar.utility import utility

    shape = free0.shape
    cells = [(h, r) for h in range(shape[0]) for r in range(shape[1])]

    def gangs(need: int, free: np.ndarray):
        def rec(i: int, left: int, acc: list):
            if left == 0:
                yield tuple(acc)
                return
            if i == len(cells):
                return
            h, r = cells[i]
            for n in range(min(left, int(free[h, r])), -1, -1):
                yield from rec(i + 1, left - n, acc + ([(h, r, n)] if n else []))

        yield from rec(0, need, [])

    @lru_cache(maxsize=None)
    def best(idx: int, key: tuple) -> float:
        if idx == len(queue):
            return 0.0
        free = np.array(key, dtype=np.int64).reshape(shape)
        j = queue[idx]
        value = best(idx + 1, key)
        need = int(v.workers[j])
        for gang in gangs(need, free):
            kinds = sorted({r for _, r, _ in gang})
            if any(v.throughput[j, r] <= 0 for r in kinds):
                continue
            rate = v.rate(j, kinds, need)
            slots = int(np.ceil(remaining[j] / rate - 1e-12))
            u = utility(v, None, j, v.jct(j, t + slots - 1))
            cost = sum(
                prices.price(v.capacity[h, r] - free[h, r], v.capacity[h, r]) * n
                for h, r, n in gang
            )
            if u - cost <= 0:
                continue
            after = free.copy()
            for h, r, n in gang:
                after[h, r] -= n
            value = max(value, u - cost + best(idx + 1, tuple(after.ravel().tolist())))
        return value

    return best(0, tuple(free0.ravel().tolist()))


def evaluate(inst: Instance, prof: Profile) -> Evaluation:
    v = hadar_view(inst)
    queue = list(range(v.n_jobs))
    prices = price_function(v, queue)
    remaining = v.work.astype(float)
    dp, _ = dp_allocation(Slot(v, queue, prices, remaining, 1))
    best = brute_force_payoff(v, queue, v.capacity.copy(), prices, remaining, 1)
    ratio = 1.0 if best <= 0 and dp <= 0 else (best / dp if dp > 0 else float("inf"))
    any_gang = best_over_all_gangs(v, queue, v.capacity.copy(), prices, remaining, 1)
    loss = 1.0 if any_gang <= 0 and dp <= 0 else (any_gang / dp if dp > 0 else float("inf"))
    return Evaluation(
        ratio,
        1.0,
        {"find_alloc_best": loss},
        {"dp": dp, "brute_force": best, "best_over_all_gangs": any_gang, "jobs": v.n_jobs},
    )


CLAIM = Claim(
    name="hadar-dp",
    statement="Hadar Algorithm 2: DP_allocation returns the best total payoff of the round (brute force / DP = 1)",
    sample=sample,
    mutate=mutate,
    evaluate=evaluate,
    checks=("find_alloc_best",),
    profiles=PROFILES,
)
