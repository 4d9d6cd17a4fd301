"""Hadar's view, price function (5)-(8) and the independent decision validator, on Fig. 1."""

import math

import pytest
from support import INSTANCES

from hetsched.core.errors import InputError
from hetsched.hadar.price import durations, price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import load_instance

FIG1 = INSTANCES / "paper" / "hadar_fig1.json"


def test_fig1_view():
    v = hadar_view(load_instance(FIG1))
    assert v.types == ("k80", "p100", "v100") and v.capacity.tolist() == [[1, 3, 2]]
    assert v.workers.tolist() == [3, 2, 2] and v.work.tolist() == [80, 30, 50]
    assert v.rate(0, [2, 0], 3) == 30  # J1 on V100s and the K80: min(40, 30) epochs per round
    # horizon: 1 + the slots each job needs alone on its slowest type: 80/20 + 30/5 + 50/2
    assert v.horizon == 1 + 4 + 6 + 25


def test_price_function_by_hand():
    v = hadar_view(load_instance(FIG1))
    t_min, t_max = durations(v)
    assert t_min.tolist() == [2.0, 2.0, 2.5] and t_max.tolist() == [4.0, 6.0, 25.0]
    p = price_function(v)
    assert p.u_max == pytest.approx(max(40 / 3, 15 / 2, 20 / 2))  # U_j(t_min) / W_j, U = E N / JCT
    assert p.u_min == pytest.approx(
        min(80 / 36 / 12, 30 / 36 / 12, 50 / 36 / 50) / 4
    )  # JCT at the horizon: 36 s
    assert p.price(0, 3) == pytest.approx(p.u_min) and p.price(3, 3) == pytest.approx(p.u_max)
    assert p.price(1, 3) == pytest.approx(p.u_min * (p.u_max / p.u_min) ** (1 / 3))
    assert p.alpha == pytest.approx(math.log(p.u_max / p.u_min))
    # the online algorithm's form: (8) for some jobs only, in their order, as for all of them
    sub = durations(v, [2, 0])
    assert sub[0].tolist() == [2.5, 2.0] and sub[1].tolist() == [25.0, 4.0]
    q = price_function(v, [2, 0])
    assert q.u_max == pytest.approx(max(40 / 3, 20 / 2))
    assert q.u_min == pytest.approx(min(80 / 36 / 12, 50 / 36 / 50) / 4)


def test_validator_recomputes_finish_and_utility():
    """Slot 1-3: J1 on 2 V100 + K80 (30/round, done after 3), J2 on 2 P100 (15/round, done after 2);
    J3 on 2 V100 from slot 4 (10/round, done after 5 rounds, slot 8)."""
    inst = load_instance(FIG1)
    d = {
        "J1": {t: {("node0", "v100"): 2, ("node0", "k80"): 1} for t in (1, 2, 3)},
        "J2": {t: {("node0", "p100"): 2} for t in (1, 2)},
        "J3": {t: {("node0", "v100"): 2} for t in range(4, 9)},
    }
    r = validate_decisions(inst, d, require_all=True)
    assert r.valid, r.violations
    assert r.finish == {"J1": 3, "J2": 2, "J3": 8} and r.jct == {"J1": 3.0, "J2": 2.0, "J3": 8.0}
    assert r.utility == pytest.approx(80 / 3 + 30 / 2 + 50 / 8)


def test_validator_lists_every_violation():
    inst = load_instance(FIG1)
    d = {
        "J1": {1: {("node0", "v100"): 2, ("node0", "k80"): 1}},  # runs once: not finished
        "J2": {1: {("node0", "v100"): 2}},  # V100s taken twice in slot 1
        "J3": {2: {("node0", "p100"): 1}},
    }  # 1 GPU: not a gang of 2
    kinds = sorted(x.kind for x in validate_decisions(inst, d, require_all=True).violations)
    assert kinds == ["capacity", "gang", "progress", "progress", "progress"]  # no job finishes


def test_missing_hadar_fields_are_input_errors():
    import dataclasses

    inst = load_instance(FIG1)
    bad = dataclasses.replace(
        inst, jobs=(dataclasses.replace(inst.jobs[0], epochs=None),) + inst.jobs[1:]
    )
    with pytest.raises(InputError, match=r"\$.jobs\[0\]"):
        hadar_view(bad)


def test_online_round_one_matches_the_papers_fig1_narrative():
    """Sec. II.A: 'Hadar assigns the tasks of J1 to two V100 GPUs and one K80 GPU in round 1,
    resulting in a throughput of min(40, 30) = 30, while J2 attains a throughput of 15.'"""
    from hetsched.hadar.online import hadar_online

    inst = load_instance(FIG1)
    run = hadar_online(inst)
    assert run.decisions["J1"][1] == {("node0", "v100"): 2, ("node0", "k80"): 1}
    assert run.decisions["J2"][1] == {("node0", "p100"): 2}
    report = validate_decisions(inst, run.decisions, require_all=True)
    assert report.valid and report.finish == run.finish


@pytest.mark.parametrize("seed", range(6))
def test_dp_allocation_equals_brute_force(seed):
    import numpy as np

    from hetsched.audit.hadar import brute_force_payoff
    from hetsched.hadar.dp_allocation import dp_allocation
    from hetsched.hadar.price import price_function
    from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server

    rng = np.random.default_rng(seed)
    types = ("k80", "p100", "v100")
    machines = [
        tuple(
            Gpu(f"m{h}-{t}-{i}", t, f"m{h}") for t in types for i in range(int(rng.integers(0, 3)))
        )
        for h in range(2)
    ]  # a server holds at least one GPU: the empty machines are left out
    servers = tuple(Server(f"m{h}", g) for h, g in enumerate(machines) if g) or (
        Server("m0", (Gpu("g", "v100", "m0"),)),
    )
    n_gpus = sum(len(s.gpus) for s in servers)
    jobs = tuple(
        Job(
            f"J{j}",
            0.0,
            1.0,
            1,
            1,
            {t: 1.0 for t in types},
            {t: 0.0 for t in types},
            requested_workers=int(rng.integers(1, min(3, n_gpus) + 1)),
            epochs=float(rng.integers(5, 50)),
            iterations_per_epoch=1,
            throughput=dict(zip(types, rng.integers(1, 30, size=3).astype(float).tolist())),
        )
        for j in range(int(rng.integers(2, 6)))
    )
    inst = Instance(
        "dp",
        Cluster({t: GpuType(t) for t in types}, servers),
        jobs,
        metadata={"hadar": {"slot_seconds": 1.0, "progress": "bottleneck"}},
    )
    v = hadar_view(inst)
    queue = list(range(v.n_jobs))
    prices = price_function(v, queue)
    value, chosen = dp_allocation(Slot(v, queue, prices, v.work.astype(float), 1))
    assert value == pytest.approx(
        brute_force_payoff(v, queue, v.capacity.copy(), prices, v.work.astype(float), 1)
    )
    used = v.capacity * 0
    for cand in chosen.values():
        for h, r, n in cand.alloc:
            used[h, r] += n
    assert (used <= v.capacity).all()


def test_online_cli(capsys):
    import json

    from hetsched.cli import main

    assert main(["online", str(FIG1), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] and out["finish_slot"] == {"J1": 3, "J2": 2, "J3": 8}
    assert out["primal_utility"] == pytest.approx(80 / 3 + 30 / 2 + 50 / 8)


def test_dp_state_space_exceeds_the_claimed_count():
    """proofs/hadar_theorem1.md: the memoized DP's states are (index, free-GPU vector), not n(Q) H R."""
    import numpy as np

    from hetsched.hadar.dp_allocation import dp_allocation
    from hetsched.hadar.price import price_function
    from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server

    types = ("k80", "p100", "v100")
    servers = tuple(
        Server(f"m{h}", tuple(Gpu(f"m{h}-{t}-{i}", t, f"m{h}") for t in types for i in range(3)))
        for h in range(2)
    )
    rng = np.random.default_rng(0)
    n = 14
    jobs = tuple(
        Job(
            f"J{j}",
            0.0,
            1.0,
            1,
            1,
            {t: 1.0 for t in types},
            {t: 0.0 for t in types},
            requested_workers=int(rng.integers(1, 3)),
            epochs=float(rng.integers(5, 50)),
            iterations_per_epoch=1,
            throughput=dict(zip(types, rng.integers(1, 30, size=3).astype(float).tolist())),
        )
        for j in range(n)
    )
    inst = Instance(
        "states",
        Cluster({t: GpuType(t) for t in types}, servers),
        jobs,
        metadata={"hadar": {"slot_seconds": 1.0, "progress": "bottleneck"}},
    )
    v = hadar_view(inst)
    stats = {}
    dp_allocation(
        Slot(v, list(range(n)), price_function(v), v.work.astype(float), 1),
        stats=stats,
    )
    assert stats["states"] > n * len(v.machines) * len(v.types)  # the claimed count is exceeded


def test_p1_optimum_on_fig1_and_online_below_it():
    """P1 finishes J1, J2, J3 in slots 3, 2, 7: 80/3 + 30/2 + 50/7. The online algorithm (J3 in
    slot 8) earns less, as an online algorithm must; both are recomputed by the validator."""
    from hetsched.exact.solve import solve
    from hetsched.hadar.online import hadar_online
    from hetsched.solvers import Status

    inst = load_instance(FIG1)
    p1 = solve(inst, "hadar-p1", "highs", time_limit=120)
    assert p1.status == Status.OPTIMAL and p1.validation.valid
    assert p1.objective == pytest.approx(80 / 3 + 30 / 2 + 50 / 7)
    online = validate_decisions(inst, hadar_online(inst).decisions)
    assert online.valid and online.utility <= p1.objective + 1e-9


TINY = INSTANCES / "hadar" / "hadar_tiny.json"


def test_p1_equals_p2_and_lp_p2_equals_p3():
    """P2 is P1 over enumerated schedules (equal optima); P3 is the dual of LP(P2) (strong duality)."""
    from hetsched.exact.solve import solve
    from hetsched.solvers import Status

    inst = load_instance(TINY)
    res = {m: solve(inst, m, "highs") for m in ("hadar-p1", "hadar-p2", "hadar-p2-lp", "hadar-p3")}
    assert all(r.status == Status.OPTIMAL for r in res.values())
    assert res["hadar-p1"].objective == pytest.approx(74 / 3) and res[
        "hadar-p2"
    ].objective == pytest.approx(74 / 3)
    assert res["hadar-p2-lp"].objective == pytest.approx(79 / 3)
    assert res["hadar-p3"].objective == pytest.approx(res["hadar-p2-lp"].objective, rel=1e-7)
    assert res["hadar-p2"].validation.valid and res["hadar-p1"].validation.valid
    assert res["hadar-p3"].bound_side == "upper"


@pytest.mark.parametrize("seed", range(3))
def test_p1_p2_agree_and_bound_the_online_algorithm(seed):
    import dataclasses

    import numpy as np

    from hetsched.exact.solve import solve
    from hetsched.hadar.online import hadar_online

    rng = np.random.default_rng(seed)
    base = load_instance(TINY)
    jobs = tuple(
        dataclasses.replace(
            j,
            epochs=float(rng.integers(4, 21)),
            throughput={t: float(rng.integers(2, 11)) for t in ("k80", "v100")},
        )
        for j in base.jobs
    )
    inst = dataclasses.replace(base, jobs=jobs)
    p1, p2 = solve(inst, "hadar-p1", "highs"), solve(inst, "hadar-p2", "highs")
    p3 = solve(inst, "hadar-p3", "highs")
    assert p1.objective == pytest.approx(p2.objective, rel=1e-7, abs=1e-9)
    assert p3.objective >= p2.objective - 1e-7  # the dual bounds the integer optimum from above
    online = validate_decisions(inst, hadar_online(inst).decisions)
    assert online.valid and online.utility <= p1.objective + 1e-7


def test_audit_hadar_dp_cli(tmp_path, capsys):
    import json

    from hetsched.cli import main

    assert (
        main(["audit", "hadar-dp", "--trials", "6", "--out", str(tmp_path), "--json", "--quiet"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["claim"] == "hadar-dp" and out["trials"] == 6 and out["violations"] == 0
    assert out["worst_ratio"] == pytest.approx(1.0) and out["bound_at_worst"] == 1.0


def test_find_alloc_is_not_the_best_allocation():
    """instances/audit/hadar_find_alloc.json: FIND_ALLOC would give J0 the P100s J1 needs, so the DP
    skips J0; J0 on V100 + K80 and J1 on the P100s pays more."""
    from hetsched.audit.hadar import PROFILES, best_over_all_gangs, evaluate
    from hetsched.hadar.dp_allocation import dp_allocation, find_alloc
    from hetsched.hadar.price import price_function

    inst = load_instance(INSTANCES / "audit" / "hadar_find_alloc.json")
    v = hadar_view(inst)
    queue = [0, 1]
    prices = price_function(v, queue)
    value, chosen = dp_allocation(Slot(v, queue, prices, v.work.astype(float), 1))
    p100 = v.types.index("p100")
    assert list(chosen) == [1] and {r for _, r, _ in chosen[1].alloc} == {p100}  # J0 skipped
    taken = find_alloc(v, 0, v.capacity.copy(), v.capacity * 0, prices, float(v.work[0]), 1)
    assert {r for _, r, _ in taken.alloc} == {p100}  # what J0 would get: its fastest type
    best = best_over_all_gangs(v, queue, v.capacity.copy(), prices, v.work.astype(float), 1)
    assert best > value * 1.09
    ev = evaluate(inst, PROFILES["ci"])
    assert ev.ratio == pytest.approx(1.0) and ev.checks["find_alloc_best"] == pytest.approx(
        best / value
    )
