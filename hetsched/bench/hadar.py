"""`hetsched bench hadar`: DP_allocation (Hadar's Algorithm 2) on long queues.

The setting of issue 4: 2000 queued jobs on 60 GPUs, 3 types, 15 machines
(:func:`hetsched.instance.generators.hadar_cluster`, Gavel's measured throughputs). Goal: <= 1 s per round.

1. ``cross_check``: the memoized DP (exact, exponential in the cluster state) against branch and
   bound (:mod:`hetsched.hadar.branch_and_bound`) on the first n jobs of the queue: both must give
   the same total payoff; seconds, DP states and B&B nodes side by side (the in-process baseline).
2. ``one_round``: one round with the whole queue. B&B with a 0.8 s budget (plus ~0.15 s for the
   LP bound, so the round fits in 1 s); its best total, the best
   upper bound (B&B's open nodes and the type-aware LP at the root) and the gap; the single
   queue-order pass that takes every job with a positive payoff, for reference.
3. ``online``: Algorithm 1 for a few rounds with B&B at 0.9 s per round: seconds per round.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np

from hetsched.bench import write_result
from hetsched.hadar.branch_and_bound import dp_allocation_bnb, lp_bound
from hetsched.hadar.dp_allocation import dp_allocation, find_alloc
from hetsched.hadar.online import hadar_online
from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.view import hadar_view
from hetsched.instance.generators import hadar_cluster
from hetsched.instance.model import Instance


def _round_inputs(inst: Instance, n: int):
    v = hadar_view(inst)
    queue = list(range(n))
    return v, queue, price_function(v, queue), v.work.astype(float)


def cross_check(sizes=(8, 12, 16), seed: int = 0) -> list[dict]:
    inst = hadar_cluster(seed)
    rows = []
    for n in sizes:
        v, queue, prices, remaining = _round_inputs(inst, n)
        stats: dict = {}
        t = time.perf_counter()
        dp_value, _ = dp_allocation(Slot(v, queue, prices, remaining, 1), stats=stats)
        dp_seconds = time.perf_counter() - t
        res = dp_allocation_bnb(Slot(v, queue, prices, remaining, 1), time_limit=60.0)
        rows.append(
            {
                "queued_jobs": n,
                "dp_seconds": round(dp_seconds, 4),
                "dp_states": stats["states"],
                "bnb_seconds": round(res.seconds, 4),
                "bnb_nodes": res.nodes,
                "bnb_proven": res.proven,
                "dp_value": dp_value,
                "bnb_value": res.value,
                "agree": bool(
                    res.proven and abs(dp_value - res.value) <= 1e-9 * max(1.0, abs(dp_value))
                ),
                "speedup": round(dp_seconds / res.seconds, 1) if res.seconds > 0 else None,
            }
        )
    return rows


def greedy_pass(v, queue, prices, remaining) -> float:
    """One pass in queue order taking every job FIND_ALLOC gives a positive payoff (a DP leaf)."""
    free, total = v.capacity.copy(), 0.0
    for j in queue:
        if not free.any():
            break
        cand = find_alloc(v, j, free, v.capacity - free, prices, float(remaining[j]), 1)
        if cand is not None:
            for h, r, k in cand.alloc:
                free[h, r] -= k
            total += cand.payoff
    return total


def one_round(n_jobs: int = 2000, seed: int = 0, budget: float = 0.8) -> dict:
    inst = hadar_cluster(seed, n_jobs=n_jobs)
    v, queue, prices, remaining = _round_inputs(inst, n_jobs)
    t = time.perf_counter()
    res = dp_allocation_bnb(Slot(v, queue, prices, remaining, 1), time_limit=budget)
    t_lp = time.perf_counter()
    lp = lp_bound(v, queue, v.capacity.copy(), prices, remaining, 1)
    lp_seconds = time.perf_counter() - t_lp
    bound = min(res.bound, lp)
    used = np.zeros_like(v.capacity)
    for cand in res.chosen.values():
        for h, r, k in cand.alloc:
            used[h, r] += k
    return {
        "queued_jobs": n_jobs,
        "gpus": int(v.capacity.sum()),
        "machines": len(v.machines),
        "types": len(v.types),
        "budget_seconds": budget,
        "bnb_seconds": round(res.seconds, 3),
        "lp_bound_seconds": round(lp_seconds, 3),
        "round_seconds": round(time.perf_counter() - t, 3),
        "proven": res.proven,
        "nodes": res.nodes,
        "best_total_payoff": res.value,
        "upper_bound": bound,
        "bnb_bound": res.bound,
        "lp_bound": lp,
        "gap": (bound - res.value) / bound if bound > 0 else 0.0,
        "jobs_allocated": len(res.chosen),
        "gpus_allocated": int(used.sum()),
        "capacity_respected": bool((used <= v.capacity).all()),
        "greedy_pass_total_payoff": greedy_pass(v, queue, prices, remaining),
    }


def online_rounds(n_jobs: int = 2000, rounds: int = 3, seed: int = 0, budget: float = 0.9) -> dict:
    inst = hadar_cluster(seed, n_jobs=n_jobs)
    t = time.perf_counter()
    run = hadar_online(inst, max_slots=rounds, round_solver="bnb", round_time_limit=budget)
    total = time.perf_counter() - t
    return {
        "queued_jobs": n_jobs,
        "rounds": len(run.rounds),
        "seconds_total": round(total, 3),
        "seconds_per_round": round(total / max(1, len(run.rounds)), 3),
        "per_round": [
            {k: r[k] for k in ("slot", "queue", "payoff", "proven", "bound", "nodes", "seconds")}
            | {"scheduled": len(r["scheduled"])}
            for r in run.rounds
        ],
    }


def run_hadar_bench(
    out: str | Path = "bench-results/hadar.json", as_json: bool = False, quick: bool = False
) -> int:
    result = {
        "suite": "hadar",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cross_check": cross_check(sizes=(6, 8) if quick else (8, 12, 16)),
        "one_round": one_round(n_jobs=200 if quick else 2000),
        "online": online_rounds(n_jobs=200 if quick else 2000, rounds=2 if quick else 3),
    }
    path = write_result(result, out, as_json)
    if not as_json:
        for row in result["cross_check"]:
            print(
                f"{row['queued_jobs']:>5} jobs  DP {row['dp_seconds']:.3f} s ({row['dp_states']} states)  "
                f"B&B {row['bnb_seconds']:.3f} s ({row['bnb_nodes']} nodes)  agree {row['agree']}"
            )
        r = result["one_round"]
        print(
            f"{r['queued_jobs']:>5} jobs  one round {r['round_seconds']:.2f} s: payoff {r['best_total_payoff']:.4g}, "
            f"bound {r['upper_bound']:.4g}, gap {r['gap']:.1%}, proven {r['proven']}"
        )
        o = result["online"]
        print(
            f"{o['queued_jobs']:>5} jobs  online {o['rounds']} rounds, {o['seconds_per_round']:.2f} s per round"
        )
        print(f"-> {path}")
    failed = [row for row in result["cross_check"] if not row["agree"]]
    return 0 if not failed and result["one_round"]["capacity_respected"] else 1
