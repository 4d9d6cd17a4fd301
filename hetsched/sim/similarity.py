"""The AppSci'24 round-based model-similarity policy simulated (Secs. 4.2-4.3, 5): every round
(3 minutes by default, the paper's best) the queue of arrived, unfinished jobs is scheduled in
arrival order by Algorithm 2 (or the exact round, ``models/similarity_allocation.py``), then
optionally packed by Algorithm 3 (or the exact packing) onto GPUs that hold one job alone.

* ``change_decisions`` (the paper's "cd"): all decisions are remade each round; without it a
  running job keeps its allocation until it finishes and the queue gets what is left.
* Progress is in samples: a job running as table row ``row`` on n GPUs of type t trains at
  throughput(row, t, n) x batch(row) samples/s (Gavel's measured table, the truth the scheduler
  estimates from the most similar reference); a packed pair runs at Gavel's measured pair rates.
* A job whose allocation (type, count, batch-size row) changes, or that resumes after waiting,
  pays ``restore_seconds`` (checkpoint-restore, "a few seconds", Sec. 4.2) at the round's start.
  A job that finishes inside a round frees its GPUs only at the next round (the paper's stated
  drawback, Sec. 6); a packed partner keeps its pair rate for the rest of the round.
* Every round's decision goes through the independent checks (:func:`check_round`,
  :func:`hetsched.packing.check_packing`); the run ends by checking that each job's samples were
  all trained (work conserved).

Metrics as the paper reports them (Fig. 6): makespan, average JCT, average waiting time (arrival
to first start), GPU utilization (GPU-time busy over GPUs x makespan; a packed GPU counts once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from hetsched.errors import HetschedError, InputError
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.similarity.reference import gavel_reference_db, parse_row
from hetsched.similarity.round import VARIANTS, Option, check_round, greedy_round, round_view

MEMORY = {"k80": 12.0, "p100": 16.0, "v100": 16.0}  # GB per GPU type


@dataclass(frozen=True)
class SimilarityWorkload:
    name: str
    gpus: dict[str, int]  # GPUs per type
    jobs: tuple[dict, ...]  # id, row, workers, samples, memory_gb, arrival (s)


def similarity_workload(
    seed: int,
    n_jobs: int = 50,
    arrival_span_minutes: float = 0.0,
    gpus: dict[str, int] | None = None,
    median_minutes: float = 20.0,
) -> SimilarityWorkload:
    """Jobs of Gavel's table rows measured on every type at their GPU count (1 GPU 60%, 2 25%,
    4 15%, when measured); arrivals uniform over ``arrival_span_minutes`` (0: all at once, the
    paper's third scenario; 7 and 15 its others); work = a log-normal duration (median
    ``median_minutes``) on the requested GPUs of V100; memory 1-12 GB (the table has none)."""
    gpus = dict(gpus or {"k80": 4, "p100": 4, "v100": 4})
    unknown = sorted(set(gpus) - set(MEMORY))
    if unknown:
        raise InputError(
            "--cluster",
            unknown[0],
            f"no measured throughputs for this GPU type (known: {', '.join(MEMORY)})",
        )
    db = gavel_reference_db()
    rng = np.random.default_rng([seed, 13])
    rows = [r for r in db.jobs if all((t, 1) in r.throughput for t in gpus)]
    jobs = []
    arrivals = (
        np.sort(rng.uniform(0.0, arrival_span_minutes * 60.0, n_jobs))
        if arrival_span_minutes > 0
        else np.zeros(n_jobs)
    )
    for k in range(n_jobs):
        r = rows[int(rng.integers(len(rows)))]
        want = int(rng.choice([1, 2, 4], p=[0.6, 0.25, 0.15]))
        if not all((t, want) in r.throughput for t in gpus):
            want = 1
        minutes = float(rng.lognormal(np.log(median_minutes), 0.8))
        samples = minutes * 60.0 * r.throughput[("v100", want)] * r.batch_size
        jobs.append(
            {
                "id": f"J{k}",
                "row": r.name,
                "workers": want,
                "samples": samples,
                "memory_gb": float(np.round(rng.uniform(1, 12) * 2) / 2),
                "arrival": float(arrivals[k]),
            }
        )
    span = f"{arrival_span_minutes:g}min" if arrival_span_minutes > 0 else "static"
    return SimilarityWorkload(f"similarity-{n_jobs}-{span}-s{seed}", gpus, tuple(jobs))


def _samples_per_second(row: str, gpu_type: str, gpus: int) -> float:
    return gavel_reference_db().get(row).throughput[(gpu_type, gpus)] * parse_row(row)[1]


def _cluster(free: dict[str, int]) -> Cluster:
    servers = tuple(
        Server(t, tuple(Gpu(f"{t}{i}", t, t) for i in range(n)))
        for t, n in sorted(free.items())
        if n > 0
    )
    return Cluster({t: GpuType(t, memory_gb=MEMORY[t]) for t in free}, servers)


def _job(j: dict, types: Iterable[str], row: str | None = None) -> Job:
    """A job of a round instance: the similarity and packing models read its model row,
    workers and memory; Hare's per-task times (1 s, no sync, on every type) are not used."""
    return Job(
        j["id"],
        j["arrival"],
        1.0,
        1,
        1,
        {t: 1.0 for t in types},
        {t: 0.0 for t in types},
        requested_workers=j["workers"],
        memory_gb=j["memory_gb"],
        model=ModelInfo(name=row or j["row"]),
    )


@dataclass
class _State:
    remaining: float
    start: float | None = None
    completion: float | None = None
    option: Option | None = None  # last allocation
    packed: bool = False  # last round it ran packed onto another job's GPU
    trained: float = 0.0


@dataclass
class _Round:
    decision: dict[str, Option] = field(default_factory=dict)
    pairs: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # (solo job, packed job, gpu type)


def _decide(
    wl: SimilarityWorkload,
    queue: list[dict],
    free: dict[str, int],
    variant: str,
    exact: str | None,
    t: int,
) -> dict[str, Option]:
    if not queue or sum(free.values()) == 0:
        return {}
    inst = Instance(
        f"{wl.name}-r{t}",
        _cluster(free),
        tuple(_job(j, free) for j in queue),
        metadata={"similarity": {"variant": variant}},
    )
    if exact:
        from hetsched.solve import solve

        res = solve(
            inst,
            "similarity-allocation",
            "highs",
            time_limit=30,
            options={"estimated": exact == "estimated"},
        )
        if res.solution is None:
            raise HetschedError(f"exact round {t} found no solution ({res.status.value})")
        decision = dict(res.solution)
    else:
        decision = greedy_round(round_view(inst))
    rep = check_round(inst, decision)
    if not rep.valid:
        raise HetschedError(f"round {t}: invalid decision: {rep.violations[0].message}")
    return decision


def _pack(
    wl: SimilarityWorkload,
    jobs: dict[str, dict],
    decision: dict[str, Option],
    waiting: list[dict],
    exact: str | None,
    t: int,
) -> list[tuple[str, str, str]]:
    from hetsched.packing import check_packing, greedy_packing, optimal_packing, packing_view

    solo = [(jid, o) for jid, o in decision.items() if o.gpus == 1]
    if not solo or not waiting:
        return []
    gpus = tuple(Gpu(f"g{k}", o.gpu_type, "s") for k, (_, o) in enumerate(solo))
    inst = Instance(
        f"{wl.name}-pack{t}",
        Cluster({tp: GpuType(tp, memory_gb=MEMORY[tp]) for tp in wl.gpus}, (Server("s", gpus),)),
        tuple(_job(jobs[jid], wl.gpus, o.row) for jid, o in solo)
        + tuple(_job(j, wl.gpus) for j in waiting),
        metadata={"packing": {"scheduled": {jid: f"g{k}" for k, (jid, _) in enumerate(solo)}}},
    )
    view = packing_view(inst)
    plan = optimal_packing(view) if exact else greedy_packing(view)
    rep = check_packing(inst, plan)
    if not rep.valid:
        raise HetschedError(f"round {t}: invalid packing: {rep.violations[0].message}")
    return [(s, q, decision[s].gpu_type) for s, q in plan.pairs]


def simulate_similarity(
    wl: SimilarityWorkload,
    variant: str = "gpu_ngpu",
    change_decisions: bool = True,
    packing: bool = False,
    exact: str | None = None,
    round_minutes: float = 3.0,
    restore_seconds: float = 10.0,
    max_rounds: int = 200_000,
) -> dict:
    """Run the policy. ``exact`` replaces Algorithms 2 and 3 by the exact round and the exact
    packing: ``"truth"`` ranks options by the jobs' true throughputs (an oracle: what the
    similarity estimate stands in for), ``"estimated"`` by the closest reference's, as the
    greedy does (the gap to the greedy is then its order alone)."""
    if variant not in VARIANTS:
        raise HetschedError(f"unknown variant '{variant}' (known: {', '.join(VARIANTS)})")
    if exact not in (None, "truth", "estimated"):
        raise HetschedError(f"unknown exact mode '{exact}' (known: truth, estimated)")
    from hetsched.packing.problem import _table

    pair_table = _table(None).pairs
    D = round_minutes * 60.0
    jobs = {j["id"]: j for j in wl.jobs}
    st = {jid: _State(remaining=j["samples"]) for jid, j in jobs.items()}
    busy_gpu_seconds, r = 0.0, 0
    while any(s.completion is None for s in st.values()):
        if r > max_rounds:
            raise HetschedError(f"jobs unfinished after {max_rounds} rounds")
        t = r * D
        queue = [
            jobs[jid] for jid, s in st.items() if s.completion is None and jobs[jid]["arrival"] <= t
        ]
        queue.sort(key=lambda j: (j["arrival"], j["id"]))
        if not change_decisions:
            keep = {
                jid: s.option
                for jid, s in st.items()
                if s.completion is None and s.option is not None and not s.packed
            }
        else:
            keep = {}
        free = dict(wl.gpus)
        for o in keep.values():
            free[o.gpu_type] -= o.gpus
        decision = dict(keep)
        decision.update(
            _decide(wl, [j for j in queue if j["id"] not in keep], free, variant, exact, r)
        )
        waiting = [j for j in queue if j["id"] not in decision]
        pairs = _pack(wl, jobs, decision, waiting, exact, r) if packing else []
        partner = {s: (q, tp) for s, q, tp in pairs}
        packed = {q: (s, tp) for s, q, tp in pairs}
        for jid in [j["id"] for j in queue]:
            s = st[jid]
            if jid in decision:
                o = decision[jid]
                rate = _samples_per_second(o.row, o.gpu_type, o.gpus)
                if jid in partner:
                    a, _ = pair_table[o.gpu_type][(o.row, 1)][(jobs[partner[jid][0]]["row"], 1)]
                    rate = a * parse_row(o.row)[1]
                gpus = o.gpus
                same = s.option is not None and (
                    s.option.gpu_type,
                    s.option.gpus,
                    s.option.row,
                ) == (o.gpu_type, o.gpus, o.row)
                new_option = o
            elif jid in packed:
                solo, tp = packed[jid]
                _, b = pair_table[tp][(decision[solo].row, 1)][(jobs[jid]["row"], 1)]
                rate, gpus = (
                    b * parse_row(jobs[jid]["row"])[1],
                    0,
                )  # the GPU is counted with its solo job
                same = s.option is not None and (
                    s.option.gpu_type,
                    s.option.gpus,
                    s.option.row,
                ) == (tp, 1, jobs[jid]["row"])
                new_option = Option(tp, 1, jobs[jid]["row"], 0.0, 0.0)
            else:
                s.option = None  # waits: its next allocation pays the restore
                continue
            if s.start is None:
                s.start = t
            delay = 0.0 if same or s.trained == 0.0 else min(restore_seconds, D)
            s.option, s.packed = new_option, jid in packed
            can = rate * (D - delay)
            if rate > 0 and can >= s.remaining - 1e-9 * max(1.0, s.remaining):
                run = delay + s.remaining / rate
                s.completion, s.trained, s.remaining = t + run, s.trained + s.remaining, 0.0
            else:
                run = D
                s.trained += can
                s.remaining -= can
            busy_gpu_seconds += gpus * run
        r += 1
    for jid, s in st.items():  # work conserved
        if abs(s.trained - jobs[jid]["samples"]) > 1e-6 * jobs[jid]["samples"]:
            raise HetschedError(f"{jid}: trained {s.trained:g} of {jobs[jid]['samples']:g} samples")
    jct = np.array([s.completion - jobs[j]["arrival"] for j, s in st.items()])
    wait = np.array([s.start - jobs[j]["arrival"] for j, s in st.items()])
    first = min(j["arrival"] for j in jobs.values())
    makespan = max(s.completion for s in st.values()) - first
    name = (
        f"similarity_{variant}"
        + ("_cd" if change_decisions else "")
        + ("_jp" if packing else "")
        + (f"_exact-{exact}" if exact else "")
    )
    return {
        "workload": wl.name,
        "policy": name,
        "round_minutes": round_minutes,
        "metrics": {
            "makespan": float(makespan),
            "avg_jct": float(jct.mean()),
            "median_jct": float(np.median(jct)),
            "waiting_time": float(wait.mean()),
            "utilization": float(busy_gpu_seconds / (sum(wl.gpus.values()) * makespan))
            if makespan > 0
            else 0.0,
        },
        "jobs": [
            {
                "id": j,
                "row": jobs[j]["row"],
                "arrival": jobs[j]["arrival"],
                "start": s.start,
                "completion": s.completion,
            }
            for j, s in st.items()
        ],
    }
