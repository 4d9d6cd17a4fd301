"""Seeded random instance families (the same seed gives the same instance).

GPU types have a speed; a job's training time on a type is its base time divided by the
type's speed raised to the job's sensitivity (Hare, Sec. 2.2.1: ResNet-50 gains 7x on a V100,
GraphSAGE 2x), rounded to 0.1 s so integer solvers scale exactly. Synchronization is shorter
than training (Hare's assumption, Sec. 5.1).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server

TYPE_NAMES = ("v100", "t4", "k80", "m60", "p100")
TYPE_SPEED = {"v100": 4.0, "p100": 2.5, "t4": 2.0, "m60": 1.2, "k80": 1.0}


def random_instance(
    seed: int,
    n_gpus: int,
    n_types: int,
    n_jobs: int,
    rounds: tuple[int, int],
    tasks: tuple[int, int],
    max_tasks: int | None = None,
    arrival_spread: float = 5.0,
    gpus_per_server: int = 4,
    name: str | None = None,
    family: str = "custom",
    resolution: float = 0.1,
) -> Instance:
    """A random instance; ``rounds`` and ``tasks`` are inclusive ranges per job; every time is a
    multiple of ``resolution`` seconds (0.1 or 1.0).

    If ``max_tasks`` is given, jobs are redrawn until the instance has at most that many tasks.
    """
    if resolution not in (0.1, 1.0):
        raise ValueError("resolution must be 0.1 or 1.0")
    digits = 1 if resolution == 0.1 else 0

    def grid(x: float) -> float:
        return float(round(x, digits))

    rng = np.random.default_rng(seed)
    types = [str(t) for t in rng.choice(TYPE_NAMES, size=n_types, replace=False)]
    gpu_type = [types[m % n_types] for m in range(n_gpus)]  # every type present
    rng.shuffle(gpu_type)
    servers = []
    for s0 in range(0, n_gpus, gpus_per_server):
        gpus = tuple(
            Gpu(f"g{m}", gpu_type[m], f"s{s0 // gpus_per_server}")
            for m in range(s0, min(n_gpus, s0 + gpus_per_server))
        )
        servers.append(Server(f"s{s0 // gpus_per_server}", gpus))
    cluster = Cluster({t: GpuType(t) for t in types}, tuple(servers))
    while True:
        jobs = []
        for n in range(n_jobs):
            base = float(rng.uniform(1.0, 6.0)) * (2.0 if resolution == 1.0 else 1.0)
            sensitivity = float(rng.uniform(0.2, 1.0))
            train = {t: max(resolution, grid(base / TYPE_SPEED[t] ** sensitivity)) for t in types}
            sync_frac = float(rng.uniform(0.0, 0.4))
            sync = {t: grid(sync_frac * train[t] * float(rng.uniform(0.5, 1.0))) for t in types}
            jobs.append(
                Job(
                    id=f"J{n}",
                    arrival=grid(float(rng.uniform(0, arrival_spread))) if n else 0.0,
                    weight=float(rng.integers(1, 4)),
                    rounds=int(rng.integers(rounds[0], rounds[1] + 1)),
                    tasks_per_round=int(rng.integers(tasks[0], tasks[1] + 1)),
                    train_time=train,
                    sync_time=sync,
                )
            )
        if max_tasks is None or sum(j.n_tasks for j in jobs) <= max_tasks:
            break
    return Instance(
        name=name or f"{family}-s{seed}",
        cluster=cluster,
        jobs=tuple(jobs),
        description=f"random family '{family}', seed {seed}",
        metadata={"generator": "hetsched.generators", "family": family, "seed": seed},
    )


def small(seed: int, name: str | None = None) -> Instance:
    """2-5 GPUs of 2-3 types, 2-6 jobs, 1-3 rounds, 1-4 tasks per round, <= 16 tasks in all, times
    in whole seconds: small enough that both exact methods prove the optimum in seconds."""
    rng = np.random.default_rng([seed, 1])
    n_gpus = int(rng.integers(2, 6))
    return random_instance(
        seed,
        n_gpus=n_gpus,
        n_types=int(rng.integers(2, min(3, n_gpus) + 1)),
        n_jobs=int(rng.integers(2, 7)),
        rounds=(1, 3),
        tasks=(1, 4),
        max_tasks=16,
        name=name,
        family="small",
        resolution=1.0,
    )


def ladder(n_tasks: int, n_gpus: int, seed: int = 0) -> Instance:
    """Benchmark instance with exactly ``n_tasks`` tasks on ``n_gpus`` GPUs of min(3, n_gpus) types:
    jobs of 2 rounds x 2 tasks (8 tasks -> 2 jobs, 64 tasks -> 16 jobs)."""
    if n_tasks % 4:
        raise ValueError("n_tasks must be a multiple of 4 (jobs of 2 rounds x 2 tasks)")
    return random_instance(
        seed,
        n_gpus=n_gpus,
        n_types=min(3, n_gpus),
        n_jobs=n_tasks // 4,
        rounds=(2, 2),
        tasks=(2, 2),
        name=f"ladder-t{n_tasks}-g{n_gpus}-s{seed}",
        family="ladder",
        arrival_spread=n_tasks / 4,
    )


def ladder_family(
    seed: int, n_tasks: int = 24, n_gpus: int = 4, name: str | None = None
) -> Instance:
    """``hetsched generate ladder --tasks N --gpus M``: :func:`ladder` as a family (jobs of 2
    rounds x 2 tasks, ``n_tasks`` a multiple of 4), the exact methods' benchmark ladder."""
    if n_tasks % 4:
        from hetsched.core.errors import InputError

        raise InputError("ladder", "--tasks", f"must be a multiple of 4 (got {n_tasks})")
    inst = ladder(n_tasks, n_gpus, seed=seed)
    return inst if name is None else dataclasses.replace(inst, name=name)


def hare_random(
    seed: int,
    n_jobs: int = 6,
    n_gpus: int = 4,
    rounds: int = 3,
    tasks_per_round: int = 3,
    name: str | None = None,
) -> Instance:
    """Hare_Sched with every feature (issue 44): ``n_jobs`` jobs arriving over time, each with
    1..``rounds`` rounds of 1..``tasks_per_round`` tasks (a barrier between rounds), on
    ``n_gpus`` GPUs of min(3, ``n_gpus``) types with per-type train and sync times (0.1 s grid)."""
    return random_instance(
        seed,
        n_gpus=n_gpus,
        n_types=min(3, n_gpus),
        n_jobs=n_jobs,
        rounds=(1, rounds),
        tasks=(1, tasks_per_round),
        name=name or f"hare-random-j{n_jobs}-g{n_gpus}-r{rounds}-k{tasks_per_round}-s{seed}",
        family="hare-random",
        arrival_spread=float(n_jobs),
    )


#: Hare Table 2 (HPDC'22): model -> (class, V100 seconds per task, speedup V100/K80, T4/K80, M60/K80).
#: Only two speedups are measured in the paper (Sec. 2.2.1, Fig. 2: ResNet-50 7x on V100 and 2x on
#: a T4; GraphSAGE about 2x on a V100). The others are ASSUMPTIONS: compute-bound models between
#: those two extremes, M60 ~ 1.3x a K80 (one GM204 die vs. one GK210 die), seconds per task
#: (a task = one data batch of a round) of the order the paper's Table 3 percentages imply.
HARE_TABLE2 = {
    "VGG-19": ("CV", 0.30, 6.0, 2.2, 1.3),
    "ResNet50": ("CV", 0.15, 7.0, 2.0, 1.3),
    "InceptionV3": ("CV", 0.25, 6.0, 2.0, 1.3),
    "Bert_base": ("NLP", 0.60, 5.0, 1.8, 1.2),
    "Transformer": ("NLP", 0.40, 5.0, 1.8, 1.2),
    "DeepSpeech": ("Speech", 0.45, 4.0, 1.6, 1.2),
    "FastGCN": ("Rec.", 0.10, 2.5, 1.4, 1.1),
    "GraphSAGE": ("Rec.", 0.08, 2.0, 1.3, 1.1),
}


def hare_table2(
    seed: int,
    n_jobs: int = 200,
    n_gpus: int = 160,
    name: str | None = None,
    arrival_rate: float = 0.5,
    mean_rounds: float = 100.0,
) -> Instance:
    """Hare's simulation setting (Sec. 7.1, Figs. 14-16): ``n_jobs`` jobs over ``n_gpus`` GPUs of
    four types (V100, T4, K80, M60 in equal numbers, 8 per server), Table 2's mix (each of the
    four classes CV, NLP, Speech, Rec. 25% of the jobs, the model uniform within its class).

    Assumptions (the paper gives neither its per-GPU times nor its size distribution): times per
    task from :data:`HARE_TABLE2` with +-20% per-job noise; sync = 10-40% of the V100 training
    time plus a network term that is the same on every type; rounds heavy-tailed (lognormal,
    mean ``mean_rounds``, at least 1); 1, 2, 4 or 8 tasks per round; Poisson arrivals at
    ``arrival_rate`` jobs/s (the paper uses the Google trace's arrivals, not shipped here);
    weights 1-4. Times are rounded to 0.01 s.
    """
    rng = np.random.default_rng([seed, 2])
    types = ("v100", "t4", "k80", "m60")
    servers = []
    for s0 in range(0, n_gpus, 8):
        gpus = tuple(
            Gpu(f"g{m}", types[m * len(types) // n_gpus], f"s{s0 // 8}")
            for m in range(s0, min(n_gpus, s0 + 8))
        )
        servers.append(Server(f"s{s0 // 8}", gpus))
    cluster = Cluster({t: GpuType(t) for t in types}, tuple(servers))
    classes: dict[str, list[str]] = {}
    for model, row in HARE_TABLE2.items():
        classes.setdefault(row[0], []).append(model)
    class_names = sorted(classes)
    arrivals = np.concatenate(([0.0], np.cumsum(rng.exponential(1 / arrival_rate, n_jobs - 1))))
    sigma = 1.0
    jobs = []
    for n in range(n_jobs):
        cls = class_names[n % 4] if n < 4 * (n_jobs // 4) else class_names[int(rng.integers(4))]
        model = classes[cls][int(rng.integers(len(classes[cls])))]
        _, v100, s_v100, s_t4, s_m60 = HARE_TABLE2[model]
        base = v100 * float(rng.uniform(0.8, 1.2))
        k80 = base * s_v100
        train = {"v100": base, "t4": k80 / s_t4, "k80": k80, "m60": k80 / s_m60}
        net = base * float(rng.uniform(0.1, 0.4))
        sync = {t: round(net, 2) for t in types}
        rounds = max(1, int(rng.lognormal(np.log(mean_rounds) - sigma**2 / 2, sigma)))
        jobs.append(
            Job(
                id=f"J{n}",
                arrival=round(float(arrivals[n]), 2),
                weight=float(rng.integers(1, 5)),
                rounds=rounds,
                tasks_per_round=int(rng.choice([1, 2, 4, 8])),
                train_time={t: max(0.01, round(x, 2)) for t, x in train.items()},
                sync_time=sync,
                model=ModelInfo(name=model, family=cls),
            )
        )
    rng.shuffle(jobs)  # class order is not arrival order
    jobs = [
        dataclasses.replace(j, id=f"J{n}", arrival=round(float(arrivals[n]), 2))
        for n, j in enumerate(jobs)
    ]
    return Instance(
        name=name or f"hare-table2-j{n_jobs}-g{n_gpus}-s{seed}",
        cluster=cluster,
        jobs=tuple(jobs),
        description=f"Hare Table 2 mix, {n_jobs} jobs on {n_gpus} GPUs (V100/T4/K80/M60), seed {seed}; "
        "synthetic times, see hetsched.instance.generators.hare_table2",
        metadata={"generator": "hetsched.generators.hare_table2", "seed": seed},
    )


def hadar_cluster(
    seed: int,
    n_jobs: int = 2000,
    n_machines: int = 15,
    gpus_per_machine: int = 4,
    name: str | None = None,
    throughputs: str | None = None,
) -> Instance:
    """Hadar's benchmark setting (issue 4's ``bench hadar``): ``n_machines`` machines of
    ``gpus_per_machine`` GPUs each, one type per machine cycling K80, P100, V100 (60 GPUs, 20 per
    type by default), and ``n_jobs`` jobs queued at time 0.

    Jobs come from Gavel's measured throughput table (``data/gavel``): a (model, scale factor)
    uniformly among those measured on all three types; W_j = the scale factor; X_j^r = Gavel's
    isolated throughput on r divided by W_j (per GPU); the work is what the job does in a V100
    duration drawn log-uniformly between 30 minutes and 20 hours, in epochs of 1,000 iterations.
    Slots of 360 s (Hadar's rounds), per-worker progress (1a).
    """
    from hetsched.instance.gavel_table import load_throughputs

    table = load_throughputs(throughputs)
    types = ("k80", "p100", "v100")
    keys = sorted(
        k
        for k in table.isolated["v100"]
        if all(k in table.isolated[t] for t in types)
        and all(table.isolated[t][k] > 0 for t in types)
        and k[1] <= gpus_per_machine * n_machines
    )
    rng = np.random.default_rng([seed, 4])
    servers = tuple(
        Server(
            f"m{h}",
            tuple(Gpu(f"m{h}-g{i}", types[h % 3], f"m{h}") for i in range(gpus_per_machine)),
        )
        for h in range(n_machines)
    )
    jobs = []
    for n in range(n_jobs):
        model, scale = keys[int(rng.integers(len(keys)))]
        per_gpu = {t: table.isolated[t][(model, scale)] / scale for t in types}
        seconds = float(np.exp(rng.uniform(np.log(1800), np.log(72000))))
        epochs = max(1.0, round(seconds * per_gpu["v100"] * scale / 1000, 1))
        jobs.append(
            Job(
                id=f"J{n}",
                arrival=0.0,
                weight=1.0,
                rounds=1,
                tasks_per_round=scale,
                train_time={t: 1.0 for t in types},
                sync_time={t: 0.0 for t in types},
                requested_workers=scale,
                epochs=epochs,
                iterations_per_epoch=1000,
                throughput={t: round(x, 4) for t, x in per_gpu.items()},
                model=ModelInfo(name=model),
            )
        )
    return Instance(
        name=name or f"hadar-cluster-j{n_jobs}-m{n_machines}-s{seed}",
        cluster=Cluster({t: GpuType(t) for t in types}, servers),
        jobs=tuple(jobs),
        description=f"{n_jobs} queued jobs (Gavel's measured throughputs) on {n_machines} machines x "
        f"{gpus_per_machine} GPUs, seed {seed}; see hetsched.instance.generators.hadar_cluster",
        metadata={
            "generator": "hetsched.generators.hadar_cluster",
            "seed": seed,
            "hadar": {"slot_seconds": 360.0, "progress": "per-worker"},
        },
    )


def _wct_instance(
    family: str,
    seed: int,
    n_jobs: int,
    n_gpus: int,
    times: np.ndarray,
    weights: np.ndarray,
    gpu_types: list[str],
    name: str | None,
) -> Instance:
    types = sorted(set(gpu_types))
    servers = tuple(Server(f"s{m}", (Gpu(f"g{m}", gpu_types[m], f"s{m}"),)) for m in range(n_gpus))
    by_type = {t: gpu_types.index(t) for t in types}  # a type's times are those of its first GPU
    jobs = tuple(
        Job(
            id=f"J{j + 1}",
            arrival=0.0,
            weight=float(weights[j]),
            rounds=1,
            tasks_per_round=1,
            train_time={t: float(times[j, m]) for t, m in by_type.items()},
            sync_time={t: 0.0 for t in types},
        )
        for j in range(n_jobs)
    )
    return Instance(
        name=name or f"{family}-n{n_jobs}-m{n_gpus}-s{seed}",
        cluster=Cluster({t: GpuType(t) for t in types}, servers),
        jobs=jobs,
        description=f"{family}: {n_jobs} jobs on {n_gpus} GPUs, p and w uniform on 1..100, seed {seed}",
        metadata={"generator": "hetsched.generators", "family": family, "seed": seed},
    )


def pm_wct(seed: int, n_jobs: int = 20, n_gpus: int = 2, name: str | None = None) -> Instance:
    """P||sum w_j C_j, the instance family of van den Akker, Hoogeveen & van de Velde (Oper. Res.
    1999) and Kowalczyk & Leus (INFORMS J. Comput. 2018): identical GPUs, one round of one task per
    job, no synchronization, all arrivals 0, p_j and w_j uniform on the integers 1..100."""
    rng = np.random.default_rng([seed, 2])
    p = rng.integers(1, 101, size=n_jobs).astype(float)
    w = rng.integers(1, 101, size=n_jobs).astype(float)
    return _wct_instance(
        "pm-wct",
        seed,
        n_jobs,
        n_gpus,
        np.repeat(p[:, None], n_gpus, axis=1),
        w,
        ["gpu"] * n_gpus,
        name,
    )


def rm_wct(seed: int, n_jobs: int = 20, n_gpus: int = 2, name: str | None = None) -> Instance:
    """R||sum w_j C_j: as :func:`pm_wct` but unrelated GPUs (each its own type), p_{j,m} drawn
    independently uniform on 1..100 per job and GPU, w_j uniform on 1..100."""
    rng = np.random.default_rng([seed, 3])
    p = rng.integers(1, 101, size=(n_jobs, n_gpus)).astype(float)
    w = rng.integers(1, 101, size=n_jobs).astype(float)
    return _wct_instance(
        "rm-wct", seed, n_jobs, n_gpus, p, w, [f"u{m}" for m in range(n_gpus)], name
    )


FAMILIES: dict[str, Callable[..., Instance]] = {
    "small": small,
    "ladder": ladder_family,
    "hare-random": hare_random,
    "hare-table2": hare_table2,
    "hadar-cluster": hadar_cluster,
    "pm-wct": pm_wct,
    "rm-wct": rm_wct,
}


def generate(family: str, seed: int, name: str | None = None, **sizes: int) -> Instance:
    """An instance of ``family``; ``sizes`` (``n_jobs``, ``n_gpus``, ``n_tasks``, ``rounds``,
    ``tasks_per_round``) where the family takes them."""
    import inspect

    params = inspect.signature(FAMILIES[family]).parameters
    unknown = sorted(k for k, v in sizes.items() if v is not None and k not in params)
    if unknown:
        from hetsched.core.errors import InputError

        flags = ", ".join("--" + k.removeprefix("n_").replace("_", "-") for k in unknown)
        raise InputError(family, None, f"family '{family}' takes no {flags}")
    return FAMILIES[family](seed, name=name, **{k: v for k, v in sizes.items() if v is not None})
