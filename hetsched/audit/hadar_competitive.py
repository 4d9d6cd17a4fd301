"""Hadar (2024) Theorem 2 audited: the online Algorithm 1 is 2 alpha competitive in total utility,
alpha = max_r(1, ln(U_max^r / U_min^r)) with (6)-(7) over all jobs.

Each trial runs the online algorithm (``hetsched.hadar.online``, decisions checked by the
validator), solves P1 exactly (``hadar-p1`` on HiGHS; a trial whose optimum is not proven is
skipped) and reports OPT / ALG against 2 alpha (ALG = 0 < OPT is an infinite ratio).

eta. The proof needs 1/eta <= t_j^max sum_r w_j^r / sum_h sum_r c_h^r for every job; the audit
uses the smallest eta that condition allows, :func:`hetsched.hadar.price.eta_from_proof` (the
largest U_min, so the smallest alpha the theorem promises). Every eta satisfying the condition is
covered by the theorem, so a violation at this eta refutes it.

Checks (LHS / RHS; > 1 fails on that instance):
``d0_half_opt``  step (9): D_0 = sum_t sum_h sum_r U_min^r c_h^r <= OPT / 2.
``definition1``  the allocation-cost relationship (Definition 1, the premise of Lemma 2) on every
                 allocation the online run makes: (c_h^r / alpha)(k^j - k^{j-1}) <= k^{j-1}
                 (gamma^j - gamma^{j-1}), with the price function (5) of the theorem's alpha and
                 gamma^{j-1} what jobs before j in the round's queue took on that machine and type.

The sampled family: 1-2 machines, 2-4 GPUs of 2-3 types, 2..max_tasks jobs of 1-2 GPUs arriving
in slots 1-3, slots of 1 s and a horizon T at which every job could finish if it ran alone from
its arrival (a precondition checked on every instance, mutated and shrunk ones included: without
it a job that cannot finish by T makes ALG = 0 trivially, see proofs/hadar_theorem2.md).
"""

from __future__ import annotations

import math

import numpy as np

from hetsched.audit.engine import Claim, Evaluation, Profile, drop_gpu, reading_of
from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.hadar.online import hadar_online
from hetsched.hadar.price import PriceFunction, eta_from_proof, price_function
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import HadarView, fastest_rate, hadar_job, hadar_view
from hetsched.instance.extensions import HadarOptions
from hetsched.instance.io import instance_to_dict, parse_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.solvers.result import Status

TYPES = ("k80", "p100", "v100")
#: the readings the theorem's verdict rests on (proofs/hadar_theorem2.md), the project's first:
#: the JCT of a finish in slot f (view.py), progress at the gang's slowest GPU or per worker
#: (sampled: each instance's own), and Algorithm 1 cut at T or run on until every job is done
READINGS = {
    "jct": ("f-a+1", "f-a"),
    "progress": ("sampled", "bottleneck", "per-worker"),
    "horizon": ("cut", "run-on"),
}
PROFILES = {
    "ci": Profile(trials=16, max_tasks=4, time_limit=20.0),
    "deep": Profile(trials=400, max_tasks=6, time_limit=60.0),
}


def alone_finish(v: HadarView, j: int) -> int:
    """The earliest slot job j can finish in if it has the cluster to itself from a_j."""
    return int(v.arrival[j]) + math.ceil(v.work[j] / fastest_rate(v, j) - 1e-12) - 1


def _job(j: int, rng: np.random.Generator, types: list[str], n_gpus: int) -> Job:
    return hadar_job(
        f"J{j}",
        float(rng.integers(0, 3)),
        types,
        workers=int(rng.integers(1, min(2, n_gpus) + 1)),
        epochs=float(rng.integers(1, 13)),
        throughput={t: float(rng.integers(1, 7)) for t in types},
    )


def sample(rng: np.random.Generator, prof: Profile) -> Instance:
    types = sorted(rng.choice(TYPES, size=int(rng.integers(2, 4)), replace=False).tolist())
    n_gpus = int(rng.integers(2, 5))
    n_machines = int(rng.integers(1, 3))
    gpus = [(f"m{i % n_machines}", types[int(rng.integers(len(types)))]) for i in range(n_gpus)]
    servers = tuple(
        Server(m, tuple(Gpu(f"{m}-g{i}", t, m) for i, (mm, t) in enumerate(gpus) if mm == m))
        for m in sorted({m for m, _ in gpus})
    )
    present = sorted({t for _, t in gpus})
    jobs = tuple(
        _job(j, rng, present, n_gpus) for j in range(int(rng.integers(2, prof.max_tasks + 1)))
    )
    inst = Instance(
        "hadar-competitive",
        Cluster({t: GpuType(t) for t in present}, servers),
        jobs,
        metadata={
            "hadar": {
                "slot_seconds": 1.0,
                "progress": str(rng.choice(["bottleneck", "per-worker"])),
                "horizon_slots": 1,
            }
        },
    )
    return with_horizon(inst, slack=int(rng.integers(0, 3)))


def with_horizon(inst: Instance, slack: int = 0) -> Instance:
    """The instance with T = the latest alone-finish slot + ``slack``."""
    d = instance_to_dict(inst)
    d["metadata"]["hadar"]["horizon_slots"] = 10_000
    probe = instance_to_dict(inst)  # the finish slots do not depend on the JCT reading
    probe["metadata"]["hadar"].pop("jct", None)
    probe["metadata"]["hadar"]["horizon_slots"] = 10_000
    v = hadar_view(parse_instance(probe, source="horizon"))
    d["metadata"]["hadar"]["horizon_slots"] = (
        max(alone_finish(v, j) for j in range(v.n_jobs)) + slack
    )
    return parse_instance(d, source="horizon")


def mutate(inst: Instance, rng: np.random.Generator, prof: Profile) -> Instance:
    """One change: a job's throughput on one type, epochs, gang size or arrival, or the horizon slack;
    the horizon is then the smallest that keeps every job finishable alone, plus 0-2 slots."""
    d = instance_to_dict(inst)
    job = d["jobs"][int(rng.integers(len(d["jobs"])))]
    types = list(d["cluster"]["gpu_types"])
    n_gpus = sum(len(s["gpus"]) for s in d["cluster"]["servers"])
    kind = rng.choice(["throughput", "epochs", "workers", "arrival", "add"])
    if kind == "throughput":
        t = types[int(rng.integers(len(types)))]
        job["throughput"][t] = float(
            min(12, max(1, job["throughput"][t] + rng.choice([-2, -1, 1, 2])))
        )
    elif kind == "epochs":
        job["epochs"] = float(min(30, max(1, job["epochs"] + rng.choice([-3, -1, 1, 3]))))
    elif kind == "workers":
        job["requested_workers"] = job["tasks_per_round"] = int(rng.integers(1, min(2, n_gpus) + 1))
    elif kind == "arrival":
        job["arrival"] = float(rng.integers(0, 4))
    elif len(d["jobs"]) < prof.max_tasks:
        d["jobs"].append(
            instance_to_dict(
                Instance(
                    "x",
                    parse_instance(d, source="m").cluster,
                    (_job(len(d["jobs"]), rng, types, n_gpus),),
                )
            )["jobs"][0]
        )
    return with_horizon(parse_instance(d, source="mutation"), slack=int(rng.integers(0, 3)))


def read(inst: Instance, reading: dict[str, str]) -> Instance:
    """The instance under a reading: ``jct`` and ``progress`` go into ``metadata.hadar``
    (``progress=sampled`` keeps the instance's own); ``horizon`` is read by :func:`evaluate`."""
    d = instance_to_dict(inst)
    d["metadata"]["hadar"]["jct"] = reading["jct"]
    if reading["progress"] != "sampled":
        d["metadata"]["hadar"]["progress"] = reading["progress"]
    return parse_instance(d, source=inst.name)


def run_on_horizon(inst: Instance) -> int:
    """Slots enough for every job to finish one after another at its slowest, after T."""
    d = instance_to_dict(inst)
    d["metadata"]["hadar"].pop("horizon_slots")
    return max(hadar_view(inst).horizon, hadar_view(parse_instance(d, source="run-on")).horizon)


def evaluate(inst: Instance, prof: Profile) -> Evaluation:
    try:
        v = hadar_view(inst)
    except InputError as e:  # under jct=f-a: a job could finish in its arrival slot
        return Evaluation(None, math.inf, {}, {"skipped": f"outside the reading's family: {e}"})
    late = [v.job_ids[j] for j in range(v.n_jobs) if alone_finish(v, j) > v.horizon]
    if late:  # outside the audited family (see the module docstring)
        return Evaluation(
            None, math.inf, {}, {"skipped": f"jobs {late} cannot finish by T even alone"}
        )
    eta = eta_from_proof(v)
    prices = price_function(v, None, eta=eta)
    run_on = reading_of(inst, "horizon", "cut") == "run-on"
    # run-on: Algorithm 1 loops "while true"; its utility counts jobs finishing after T, the
    # prices (6)-(7) and OPT(P1) keep the instance's T
    slots = run_on_horizon(inst) if run_on else None
    run = hadar_online(inst, eta=eta, max_slots=slots)
    checked = inst
    if run_on:
        d = instance_to_dict(inst)
        d["metadata"]["hadar"]["horizon_slots"] = slots
        checked = parse_instance(d, source=inst.name)
    online = validate_decisions(checked, run.decisions)
    if not online.valid:
        raise AssertionError(f"online decisions invalid: {online.violations[:3]}")
    opt = solve(inst, "hadar-p1", "highs", time_limit=prof.time_limit)
    if opt.status != Status.OPTIMAL or not opt.validation.valid:
        return Evaluation(None, 2 * prices.alpha, {}, {"skipped": f"P1 {opt.status.value}"})
    best, alg = float(opt.objective), online.utility
    ratio = best / alg if alg > 0 else (math.inf if best > 0 else 1.0)
    d0 = v.horizon * float(v.capacity.sum()) * prices.u_min  # (9)
    checks = {"d0_half_opt": d0 / (best / 2) if best > 0 else math.inf}
    if any(run.decisions.values()):
        checks["definition1"] = allocation_cost_ratio(v, run.decisions, prices)
    return Evaluation(
        ratio,
        2 * prices.alpha,
        checks,
        {
            "opt": best,
            "online": alg,
            "alpha": prices.alpha,
            "eta": eta,
            "u_max": prices.u_max,
            "u_min": prices.u_min,
            "D0": d0,
            "horizon": v.horizon,
            "online_finish": online.finish,
        },
    )


def allocation_cost_ratio(v: HadarView, decisions: dict, prices: PriceFunction) -> float:
    """max over the run's allocations of (c/alpha)(k(gamma + n) - k(gamma)) / (k(gamma) n), Definition 1."""
    order = [
        v.job_ids[j] for j in np.argsort(v.arrival, kind="stable")
    ]  # the queue order of every round
    mach = {m: h for h, m in enumerate(v.machines)}
    typ = {t: r for r, t in enumerate(v.types)}
    worst = 0.0
    for t in range(1, v.horizon + 1):
        gamma = np.zeros_like(v.capacity)
        for jid in order:
            for (m, gt), n in decisions[jid].get(t, {}).items():
                h, r = mach[m], typ[gt]
                c, g = v.capacity[h, r], gamma[h, r]
                lhs = c / prices.alpha * (prices.price(g + n, c) - prices.price(g, c))
                worst = max(worst, lhs / (prices.price(g, c) * n))
                gamma[h, r] += n
    return worst


def size(inst: Instance) -> tuple:
    """Jobs, GPUs, horizon, then the sum of all numbers."""
    horizon = (inst.extensions.hadar or HadarOptions()).horizon_slots or 0
    numbers = sum(
        j.arrival + j.epochs + sum(j.throughput.values()) + (j.requested_workers or 1)
        for j in inst.jobs
    )
    return (len(inst.jobs), len(inst.gpus), horizon, numbers)


def reductions(inst: Instance) -> list[Instance]:
    """Drop a job or a GPU, one slot less, one epoch or one throughput unit less, an earlier arrival,
    a smaller gang."""
    d0 = instance_to_dict(inst)
    out: list[dict] = []

    def variant(change) -> None:
        d = instance_to_dict(inst)
        change(d)
        out.append(d)

    for n, job in enumerate(d0["jobs"]):
        if len(d0["jobs"]) > 1:
            variant(lambda d, n=n: d["jobs"].pop(n))
        if job["epochs"] > 1:
            variant(lambda d, n=n: d["jobs"][n].__setitem__("epochs", d["jobs"][n]["epochs"] - 1))
        if job["arrival"] > 0:
            variant(lambda d, n=n: d["jobs"][n].__setitem__("arrival", d["jobs"][n]["arrival"] - 1))
        if (job.get("requested_workers") or 1) > 1:
            variant(lambda d, n=n: d["jobs"][n].update(requested_workers=1, tasks_per_round=1))
        for t, x in job["throughput"].items():
            if x > 1:
                variant(
                    lambda d, n=n, t=t: d["jobs"][n]["throughput"].__setitem__(
                        t, d["jobs"][n]["throughput"][t] - 1
                    )
                )
    if d0["metadata"]["hadar"]["horizon_slots"] > 1:
        variant(
            lambda d: d["metadata"]["hadar"].__setitem__(
                "horizon_slots", d["metadata"]["hadar"]["horizon_slots"] - 1
            )
        )
    gpus = [g["id"] for s in d0["cluster"]["servers"] for g in s["gpus"]]
    for victim in gpus if len(gpus) > 1 else []:
        variant(lambda d, victim=victim: drop_gpu(d, victim))
    result = []
    for d in out:
        try:
            small = parse_instance(d, source="reduction")
            hadar_view(small)
        except Exception:  # e.g. a gang larger than what is left of the cluster
            continue
        result.append(small)
    return result


CLAIM = Claim(
    name="hadar-competitive",
    statement="Hadar Theorem 2: OPT(P1) <= 2 alpha x the online Algorithm 1's total utility, alpha = "
    "max(1, ln(U_max/U_min)) with eta the smallest the proof allows; with step (9) D_0 <= OPT/2 "
    "and Definition 1 (Lemma 2's premise) on every allocation (instances where every job can finish by T alone)",
    sample=sample,
    mutate=mutate,
    evaluate=evaluate,
    checks=("d0_half_opt", "definition1"),
    profiles=PROFILES,
    reductions=reductions,
    size=size,
    readings=READINGS,
    read=read,
)
