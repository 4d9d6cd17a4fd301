"""Branch-and-price over machine schedules (``--solver bp``): against independent oracles (the
classical P2 DP, enumeration of assignments), against CP-SAT, its pricing DP against
enumeration, its bounds, phase one, the time limit, and ``--solver auto``."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import INSTANCES

from hetsched.exact.registry import auto_formulation
from hetsched.exact.solve import solve
from hetsched.instance.generators import pm_wct, rm_wct
from hetsched.instance.io import load_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.schedule.validate import validate
from hetsched.solvers import Status
from hetsched.solvers.colgen.machines import (
    machine_problem,
    solve_machine_schedules,
    unsupported_reason,
)
from hetsched.solvers.colgen.machines.pricing import ClassPricer
from hetsched.solvers.colgen.machines.schedules import list_schedule
from hetsched.solvers.colgen.machines.search import _Node, _Search


def wct_instance(p, w, sync=None, arrival: float = 0.0, types=None) -> Instance:
    """Jobs of one task on GPUs; p[j][m] training, sync[j][m] synchronization (default 0)."""
    p = np.asarray(p, dtype=float)
    n, m = p.shape
    sync = np.zeros_like(p) if sync is None else np.asarray(sync, dtype=float)
    types = types or [f"u{g}" for g in range(m)]
    first = {t: types.index(t) for t in dict.fromkeys(types)}
    servers = tuple(Server(f"s{g}", (Gpu(f"g{g}", types[g], f"s{g}"),)) for g in range(m))
    jobs = tuple(
        Job(
            f"J{j}",
            arrival,
            float(w[j]),
            1,
            1,
            {t: float(p[j, g]) for t, g in first.items()},
            {t: float(sync[j, g]) for t, g in first.items()},
        )
        for j in range(n)
    )
    return Instance("wct", Cluster({t: GpuType(t) for t in first}, servers), jobs)


def p2_oracle(p, w) -> float:
    """P2||sum w_j C_j: jobs in Smith's order, DP over the load of GPU 1 (the other's is the rest)."""
    order = sorted(range(len(p)), key=lambda j: (-w[j] / p[j], j))
    best = {0: 0}
    done = 0
    for j in order:
        done += p[j]
        nxt: dict[int, int] = {}
        for load, cost in best.items():
            for new, c in (
                (load + p[j], cost + w[j] * (load + p[j])),
                (load, cost + w[j] * (done - load)),
            ):
                if c < nxt.get(new, math.inf):
                    nxt[new] = c
        best = nxt
    return min(best.values())


def enumerate_optimum(inst: Instance) -> float:
    """Every assignment of jobs to GPUs, each GPU in Smith's order (optimal for a fixed assignment)."""
    gpus, jobs = inst.gpus, inst.jobs
    a = jobs[0].arrival
    best = math.inf
    for assign in itertools.product(range(len(gpus)), repeat=len(jobs)):
        total = 0.0
        for g, gpu in enumerate(gpus):
            mine = [j for j in jobs if assign[jobs.index(j)] == g]
            mine.sort(key=lambda j: -j.weight / inst.train_time(j.id, gpu.id))
            t = a
            for j in mine:
                t += inst.train_time(j.id, gpu.id)
                total += j.weight * (t + inst.sync_time(j.id, gpu.id))
        best = min(best, total)
    return best


def bp(inst: Instance, time_limit: float = 60.0):
    res = solve(inst, "hare-sched", "bp", time_limit=time_limit)
    assert res.validation is not None and res.validation.valid, res.notes
    # feasible with no tolerance at all: the re-timed schedule never overlaps by round-off
    assert validate(inst, res.solution, tol=0.0).valid
    return res


@given(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 30)), min_size=2, max_size=14))
def test_p2_optimum_equals_the_classical_dp(jobs):
    p, w = [a for a, _ in jobs], [b for _, b in jobs]
    inst = wct_instance([[x, x] for x in p], w, types=["gpu", "gpu"])
    res = bp(inst)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(p2_oracle(p, w), abs=1e-9)


@settings(max_examples=10)
@given(st.integers(2, 6), st.integers(1, 3), st.integers(0, 10_000))
def test_unrelated_gpus_with_sync_match_enumeration(n, m, seed):
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 40, size=(n, m)) / 10  # 0.1 s resolution: scaled ticks, float re-timing
    sync = rng.integers(0, 10, size=(n, m)) / 10
    inst = wct_instance(p, rng.integers(1, 9, size=n), sync, arrival=1.5)
    res = bp(inst)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(enumerate_optimum(inst), rel=1e-9)


@pytest.mark.parametrize(
    "family,n,m,seed", [("pm", 7, 2, 1), ("pm", 8, 3, 2), ("rm", 7, 2, 3), ("rm", 6, 3, 4)]
)
def test_agrees_with_cpsat(family, n, m, seed):
    gen = pm_wct if family == "pm" else rm_wct
    inst = gen(seed, n_jobs=n, n_gpus=m)
    res, ref = bp(inst), solve(inst, "hare-sched", "cpsat", time_limit=60)
    assert res.status == ref.status == Status.OPTIMAL
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)


@settings(max_examples=10)
@given(st.integers(3, 8), st.integers(0, 10_000))
def test_pricing_dp_is_the_least_over_enumerated_columns(n, seed):
    """min over every subset of jobs run in Smith's order without idle time, inside the windows."""
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 6, size=n)
    w = rng.integers(1, 6, size=n).astype(float)
    const = rng.integers(0, 4, size=n).astype(float)
    pi = rng.uniform(0, 40, size=n)
    lo = rng.integers(0, 6, size=n)
    hi = lo + rng.integers(0, 20, size=n)
    allowed = rng.random(n) < 0.8
    order = np.array(sorted(range(n), key=lambda j: (-w[j] / p[j], j)))
    horizon = int(p.sum())
    best_value, cols = ClassPricer(order, p, w, const, horizon).price(
        pi, lo, hi, allowed, most=50, below=1e9
    )
    brute = 0.0  # the empty column
    for r in range(1, n + 1):
        for subset in itertools.combinations(order.tolist(), r):  # combinations keep Smith's order
            t, value, ok = 0, 0.0, True
            for j in subset:
                t += p[j]
                ok &= bool(allowed[j] and lo[j] <= t <= hi[j])
                value += w[j] * t + const[j] - pi[j]
            if ok:
                brute = min(brute, value)
    assert best_value == pytest.approx(brute, abs=1e-9)
    for jobs, ends in cols:  # every column returned is a real one with its end ticks
        assert np.array_equal(ends, np.cumsum(p[jobs]))
        assert all(allowed[j] and lo[j] <= e <= hi[j] for j, e in zip(jobs, ends))


@settings(max_examples=8)
@given(st.integers(4, 12), st.integers(1, 3), st.integers(0, 10_000))
def test_root_bound_is_below_every_validated_schedule(n, m, seed):
    inst = rm_wct(seed, n_jobs=n, n_gpus=m)
    prob = machine_problem(inst)
    s = _Search(prob, math.inf, 0, 0.8, 10)
    start = list_schedule(prob)
    for col in start:
        s.add(col)
    root = _Node(
        -math.inf,
        0,
        np.zeros(n, dtype=np.int64),
        np.full(n, int(prob.horizon.max()), dtype=np.int64),
        np.ones((n, prob.n_classes), dtype=bool),
    )
    _, bound, _ = s.solve_node(root)
    res = bp(inst)
    heuristic = sum(c.cost for c in start) / prob.divisor
    assert bound / prob.divisor <= res.objective + 1e-9 <= heuristic + 1e-9


def test_phase_one_prunes_a_node_no_schedule_obeys():
    inst = wct_instance([[1.0], [1.0], [1.0]], [1, 1, 1], types=["gpu"])  # three jobs, one GPU
    prob = machine_problem(inst)
    s = _Search(prob, math.inf, 0, 0.8, 10)
    for col in list_schedule(prob):
        s.add(col)
    node = _Node(
        -math.inf, 1, np.array([1, 1, 1]), np.array([1, 1, 1]), np.ones((3, 1), dtype=bool)
    )  # all end at 1
    status, bound, _ = s.solve_node(node)
    assert status == "pruned" and bound == math.inf and s.stats.phase_one == 1


def test_time_limit_is_never_optimal_and_keeps_a_valid_bound():
    inst = pm_wct(1, n_jobs=100, n_gpus=2)
    res = bp(inst, time_limit=0.5)
    assert res.status == Status.TIME_LIMIT
    assert res.bound is not None and res.bound <= res.objective and res.gap > 0


@pytest.mark.parametrize("family,n,m,seed", [("rm", 6, 3, 21), ("rm", 7, 4, 51), ("pm", 10, 3, 37)])
def test_instances_whose_root_lp_is_fractional_are_proven_by_branching(family, n, m, seed):
    """Found by searching seeds: the root LP is not integral, the search branches and still proves
    the optimum that enumeration gives."""
    inst = (pm_wct if family == "pm" else rm_wct)(seed, n_jobs=n, n_gpus=m)
    prob = machine_problem(inst)
    res = solve_machine_schedules(prob)
    assert res.stats.nodes > 1 and res.proven
    assert res.solution.cost / prob.divisor == pytest.approx(enumerate_optimum(inst))


def test_what_it_takes():
    assert unsupported_reason(pm_wct(0, 5, 2)) is None
    fig9 = load_instance("hare_fig9")
    assert "rounds" in unsupported_reason(fig9)
    spread = replace(
        pm_wct(0, 3, 2),
        jobs=tuple(replace(j, arrival=float(i)) for i, j in enumerate(pm_wct(0, 3, 2).jobs)),
    )
    assert "arrive" in unsupported_reason(spread)
    base = pm_wct(0, 3, 2)
    big = replace(base.jobs[0], train_time={"gpu": 1e15}, weight=1e3)  # the largest values taken
    huge = replace(base, jobs=(big,) + base.jobs[1:])
    assert "2^53" in unsupported_reason(huge)  # refused with a reason, never an overflow


def test_auto_runs_the_portfolio_with_bp_where_it_applies_and_cpsat_elsewhere():
    """``--solver auto`` picks the portfolio for hare-sched; its exact method is bp on the
    P||sum wC special case and CP-SAT on multi-round jobs (auto's pick among the others)."""
    wct, fig9 = pm_wct(0, 8, 2), load_instance("hare_fig9")
    assert (
        auto_formulation("hare-sched", wct, exclude=("portfolio",))[0].kind == "machine-schedules"
    )
    spec, why = auto_formulation("hare-sched", fig9, exclude=("portfolio",))
    assert spec.kind == "cpsat" and "machine-schedules: job" in why
    res = solve(wct, "hare-sched", "auto")  # no clock: the proof does not depend on the load
    assert res.solver == "portfolio" and res.status == Status.OPTIMAL
    assert "auto picked portfolio" in res.notes[0] and "bp: optimal" in res.log
    res = solve(fig9, "hare-sched", "auto")
    assert (
        res.solver == "portfolio" and res.status == Status.OPTIMAL and "cpsat: optimal" in res.log
    )


WCT = INSTANCES / "wct"
WCT_MANIFEST = json.loads((WCT / "manifest.json").read_text())["instances"]


@pytest.mark.parametrize("name", sorted(WCT_MANIFEST))
def test_shipped_literature_instances_reach_their_certified_optima(name):
    """instances/wct/: optima certified by bp and CP-SAT together (``hetsched certify``)."""
    inst = load_instance(WCT / name)
    res = bp(inst)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(WCT_MANIFEST[name]["optimum"], rel=1e-12)


def test_bench_family_runs_resume_from_their_log(tmp_path, capsys):
    from hetsched.bench.wct import run_wct_bench

    out = tmp_path / "wct.jsonl"
    assert run_wct_bench(["rm-wct"], ["bp"], time_limit=30, out=out, quick=True) == 0
    first = out.read_text()
    rows = [json.loads(line) for line in first.splitlines()]
    assert len(rows) == 2 and all(r["status"] == "optimal" and r["cpu_seconds"] >= 0 for r in rows)
    assert run_wct_bench(["rm-wct"], ["bp"], time_limit=30, out=out, quick=True) == 0
    assert out.read_text() == first  # nothing solved twice
