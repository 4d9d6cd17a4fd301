"""``placement``: Harmony (ToN'22) compares its learned placement with multi-resource bin packing
(Tetris) and load balancing (Sec. VII), and argues in Sec. III that neither is good enough under
interference. Audited here as the claim a bin-packing scheduler implicitly makes: Tetris's
placement maximizes the interval's reward of eq. (1). Ratio = exact optimum
(``models/harmony_placement.py`` on HiGHS) / Tetris's reward, both recomputed by the
independent check; bound 1. The optimum places every new job (option ``place_all``, as Harmony's
agent does while resources last); a method that leaves a job waiting is compared anyway (its
ratio may then fall below 1: waiting spares the others its interference). Checks, each optimum / that method's reward (> 1: below the
optimum): ``load_balancing``, ``bin_packing`` (best fit), ``standalone``, ``greedy_true`` (each
job's best placement under the true speed model, in arrival order) and ``greedy_learned`` (the
same ranked by the learned interference predictor, Harmony's reward model in Sec. VI).

Instances: random intervals of :mod:`hetsched.harmony.generate` with 2-4 servers, 0-2 earlier
jobs placed by load balancing and 1-3 new jobs of 1-2 workers and 0-2 parameter servers
(``deep``: up to 5 servers, 4 new jobs, 3 workers, 3 parameter servers).
"""

from __future__ import annotations

import numpy as np

from hetsched.audit.engine import Claim, Evaluation, Profile
from hetsched.harmony import data
from hetsched.harmony.generate import random_instance
from hetsched.harmony.heuristics import greedy_by_reward, place_by_rule
from hetsched.harmony.predictor import default_predictor
from hetsched.harmony.problem import check_placement, placement_view
from hetsched.instance.io import instance_to_dict, parse_instance
from hetsched.instance.model import Instance

PROFILES = {
    "ci": Profile(trials=60, max_tasks=2, time_limit=20.0),
    "deep": Profile(trials=2000, max_tasks=3, time_limit=60.0),
}
CHECKS = ("load_balancing", "bin_packing", "standalone", "greedy_true", "greedy_learned")


def _max_servers(prof: Profile) -> int:
    return 4 if prof.max_tasks <= 2 else 5


def _all_fit(inst: Instance) -> bool:
    """Some rule places every new job (so the place-all optimum exists)."""
    view = placement_view(inst)
    need = set(view.job_ids[n] for n in np.flatnonzero(view.new))
    return any(
        set(place_by_rule(view, r).jobs) == need
        for r in ("tetris", "load-balancing", "bin-packing")
    )


def sample(rng: np.random.Generator, prof: Profile) -> Instance:
    """A random interval in which the new jobs can all be placed (redrawn until one is)."""
    while True:
        inst = random_instance(
            rng,
            n_servers=int(rng.integers(2, _max_servers(prof) + 1)),
            n_new=int(rng.integers(1, prof.max_tasks + 2)),
            n_old=int(rng.integers(0, 3)),
            max_workers=prof.max_tasks,
            max_ps=prof.max_tasks,
        )
        if _all_fit(inst):
            return inst


def _new_jobs(d: dict) -> list[dict]:
    placed = d["metadata"]["placement"]["jobs"]
    return [j for j in d["jobs"] if "placed" not in placed.get(j["id"], {})]


def mutate(inst: Instance, rng: np.random.Generator, prof: Profile) -> Instance:
    """Change a job's model or epochs, a new job's workers or parameter servers, or add a new job."""
    d = instance_to_dict(inst)
    new = _new_jobs(d)
    kind = rng.choice(["model", "epochs", "workers", "ps", "add"])
    job = d["jobs"][int(rng.integers(len(d["jobs"])))]
    if kind == "model":
        job["model"]["name"] = data.MODELS[int(rng.integers(len(data.MODELS)))]
    elif kind == "epochs":
        job["epochs"] = float(max(1, round(job["epochs"] * float(rng.choice([0.5, 2.0])))))
    elif kind in ("workers", "ps") and new:
        j = new[int(rng.integers(len(new)))]
        if kind == "workers":
            j["requested_workers"] = int(rng.integers(1, prof.max_tasks + 1))
        else:
            d["metadata"]["placement"]["jobs"][j["id"]]["parameter_servers"] = int(
                rng.integers(0, prof.max_tasks + 1)
            )
    elif kind == "add" and len(new) < prof.max_tasks + 1:
        jid = f"J{len(d['jobs'])}"
        while any(j["id"] == jid for j in d["jobs"]):
            jid += "x"
        d["jobs"].append(
            {
                "id": jid,
                "arrival": float(len(d["jobs"])),
                "weight": 1.0,
                "rounds": 1,
                "tasks_per_round": 1,
                "train_time": dict(job["train_time"]),
                "sync_time": dict(job["sync_time"]),
                "requested_workers": int(rng.integers(1, prof.max_tasks + 1)),
                "epochs": 8.0,
                "model": {"name": data.MODELS[int(rng.integers(len(data.MODELS)))]},
            }
        )
        d["metadata"]["placement"]["jobs"][jid] = {
            "parameter_servers": int(rng.integers(0, prof.max_tasks + 1))
        }
    return parse_instance(d, source="mutation")


def evaluate(inst: Instance, prof: Profile) -> Evaluation:
    from hetsched.exact.solve import solve
    from hetsched.solvers import Status

    view = placement_view(inst)
    exact = solve(
        inst,
        "harmony-placement",
        "highs",
        time_limit=prof.time_limit,
        threads=1,
        options={"place_all": True},
    )
    if (
        exact.status != Status.OPTIMAL
    ):  # not proven, or the new jobs cannot all fit (a mutation's doing)
        return Evaluation(None, 1.0, {}, {"exact_status": exact.status.value})
    opt = float(exact.objective)
    methods = {
        "tetris": place_by_rule(view, "tetris"),
        "load_balancing": place_by_rule(view, "load-balancing"),
        "bin_packing": place_by_rule(view, "bin-packing"),
        "standalone": place_by_rule(view, "standalone"),
        "greedy_true": greedy_by_reward(view),
        "greedy_learned": greedy_by_reward(view, default_predictor().speed_fractions),
    }
    values = {}
    for name, plan in methods.items():
        rep = check_placement(inst, plan)
        assert rep.valid, (name, rep.violations)
        values[name] = float(rep.objective)

    def over(x: float) -> float:
        return opt / x if x > 0 else (float("inf") if opt > 0 else 1.0)

    new = [view.job_ids[n] for n in np.flatnonzero(view.new)]
    waiting = {name: [j for j in new if j not in plan.jobs] for name, plan in methods.items()}
    return Evaluation(
        over(values["tetris"]),
        1.0,
        {c: over(values[c]) for c in CHECKS},
        {
            "optimum": opt,
            "values": values,
            "optimal_placement": exact.solution.to_dict()["placement"],
            "tetris_placement": methods["tetris"].to_dict()["placement"],
            "waiting": {k: w for k, w in waiting.items() if w},
        },
    )


def reductions(inst: Instance) -> list[Instance]:
    """Drop one job (new, or earlier with its tasks), or one server no earlier job uses."""
    d = instance_to_dict(inst)
    meta = d["metadata"]["placement"]
    out = []
    for k, job in enumerate(d["jobs"]):
        if len(d["jobs"]) > 1 and (
            len(_new_jobs(d)) > 1 or "placed" in meta["jobs"].get(job["id"], {})
        ):
            e = instance_to_dict(inst)
            del e["jobs"][k]
            e["metadata"]["placement"]["jobs"].pop(job["id"], None)
            out.append(parse_instance(e, source="shrink"))
    used = {s for j in meta["jobs"].values() for s in j.get("placed", {})}
    servers = d["cluster"]["servers"]
    if len(servers) > 1:
        for k, s in enumerate(servers):
            if s["id"] not in used:
                e = instance_to_dict(inst)
                del e["cluster"]["servers"][k]
                e["metadata"]["placement"]["servers"].pop(s["id"], None)
                out.append(parse_instance(e, source="shrink"))
    return out


def size(inst: Instance) -> tuple:
    v = placement_view(inst)
    return (len(inst.jobs), v.n_servers, int(v.workers.sum() + v.parameter_servers.sum()))


CLAIM = Claim(
    name="placement",
    statement="multi-resource bin packing (Tetris) places each interval's jobs with the largest reward (1) (Harmony, ToN'22)",
    sample=sample,
    mutate=mutate,
    evaluate=evaluate,
    checks=CHECKS,
    profiles=PROFILES,
    reductions=reductions,
    size=size,
)
