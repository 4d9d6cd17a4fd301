"""Gavel's allocation LPs: hand-checked optima, an independent LP route (scipy's linprog on
matrices built here), the exact makespan LP against bisection, and the validator."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from support import instance_path

from hetsched.cli import main
from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import solve
from hetsched.gavel import allocation_view, check_allocation, equal_share
from hetsched.gavel.problem import AllocationView
from hetsched.gavel.validate import TOL
from hetsched.instance.io import load_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.solvers import Status

TWO = instance_path("gavel_two_jobs.json")


@pytest.mark.parametrize(
    "model,expected",
    [
        ("gavel-max-min-fairness", 1.0),  # each job gets a whole GPU all the time
        ("gavel-max-min-fairness-perf", 1.0),  # A: (1+3a)/2.5 = B: (2-a)/1.5 at a = 1/2
        ("gavel-makespan", 400 / 7),  # 1 + 3a = 2 - a at a = 1/4: both at 1.75 steps/s, 100 steps
        ("gavel-max-throughput", 1.6 + 2 / 3),  # A on V100 (4/2.5), B on K80 (1/1.5)
        ("gavel-max-throughput-cost", 2 / 3),  # B alone on the $1 K80: (1/1.5) per dollar
    ],
)
def test_hand_checked_optima(model, expected):
    r = solve(load_instance(TWO), model, "highs")
    assert r.status == Status.OPTIMAL and r.validation.valid
    assert r.objective == pytest.approx(expected, rel=1e-7)
    assert r.gap <= 1e-7


def random_instance(seed: int, n_jobs: int) -> Instance:
    rng = np.random.default_rng(seed)
    types = ("k80", "p100", "v100")
    counts = rng.integers(1, 5, size=3)
    gpus = tuple(Gpu(f"{t}-{i}", t, "s") for t, c in zip(types, counts) for i in range(c))
    cluster = Cluster(
        {t: GpuType(t, cost_per_hour=float(c)) for t, c in zip(types, (0.9, 1.5, 3.1))},
        (Server("s", gpus),),
    )
    jobs = []
    for j in range(n_jobs):
        thr = np.sort(rng.uniform(0.2, 5.0, size=3))  # faster on newer types
        jobs.append(
            Job(
                f"J{j}",
                0.0,
                float(rng.integers(1, 4)),
                1,
                1,
                {t: 1.0 for t in types},
                {t: 0.0 for t in types},
                requested_workers=int(rng.choice([1, 2, 4])),
                throughput=dict(zip(types, thr.tolist())),
                epochs=float(rng.integers(1, 10)),
                iterations_per_epoch=100,
            )
        )
    return Instance(f"alloc-{seed}", cluster, tuple(jobs))


def linprog_max_min(coef: np.ndarray, scale: np.ndarray, count: np.ndarray) -> float:
    """max z s.t. z <= sum_r coef[j, r] x[j, r]; sum_r x <= 1; sum_j s_j x[j, r] <= N_r; x >= 0."""
    n, k = coef.shape
    nv = n * k + 1
    c = np.zeros(nv)
    c[-1] = -1.0
    rows, rhs = [], []
    for j in range(n):
        row = np.zeros(nv)
        row[j * k : (j + 1) * k] = -coef[j]
        row[-1] = 1.0
        rows.append(row), rhs.append(0.0)
        row = np.zeros(nv)
        row[j * k : (j + 1) * k] = 1.0
        rows.append(row), rhs.append(1.0)
    for r in range(k):
        row = np.zeros(nv)
        row[[j * k + r for j in range(n)]] = scale
        rows.append(row), rhs.append(count[r])
    res = linprog(
        c,
        A_ub=np.array(rows),
        b_ub=np.array(rhs),
        bounds=[(0, None)] * (nv - 1) + [(None, None)],
        method="highs-ipm",
    )
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("seed", range(6))
def test_max_min_fairness_matches_an_independent_lp(seed):
    inst = random_instance(seed, n_jobs=3 + seed)
    v = allocation_view(inst)
    ref = np.sum(v.throughput * equal_share(v), axis=1)
    expected = {
        "gavel-max-min-fairness": np.tile((v.scale / v.weight)[:, None], (1, 3)),
        "gavel-max-min-fairness-perf": v.throughput * (v.scale / v.weight / ref)[:, None],
        "gavel-makespan": v.throughput / v.steps[:, None],  # max min thr_j / R_j = 1 / makespan
    }
    for model, coef in expected.items():
        r = solve(inst, model, "highs")
        assert r.status == Status.OPTIMAL and r.validation.valid
        value = linprog_max_min(coef, v.scale, v.count)
        got = 1 / r.objective if model == "gavel-makespan" else r.objective
        assert got == pytest.approx(value, rel=1e-6), model


def feasible_for_makespan(v, T: float) -> bool:
    """Is there an allocation finishing every job by T? sum_r T_{j,r} x_{j,r} >= R_j / T."""
    n, k = v.throughput.shape
    rows, rhs = [], []
    for j in range(n):
        row = np.zeros(n * k)
        row[j * k : (j + 1) * k] = -v.throughput[j]
        rows.append(row), rhs.append(-v.steps[j] / T)
        row = np.zeros(n * k)
        row[j * k : (j + 1) * k] = 1.0
        rows.append(row), rhs.append(1.0)
    for r in range(k):
        row = np.zeros(n * k)
        row[[j * k + r for j in range(n)]] = v.scale
        rows.append(row), rhs.append(v.count[r])
    return (
        linprog(np.zeros(n * k), A_ub=np.array(rows), b_ub=np.array(rhs), bounds=(0, None)).status
        == 0
    )


@pytest.mark.parametrize("seed", range(3))
def test_exact_makespan_lp_is_at_most_any_bisection_answer(seed):
    inst = random_instance(100 + seed, n_jobs=5)
    v = allocation_view(inst)
    exact = solve(inst, "gavel-makespan", "highs").objective
    lo, hi = 0.0, 1.0
    while not feasible_for_makespan(v, hi):
        hi *= 2
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if feasible_for_makespan(v, mid) else (mid, hi)
    # bisection returns a feasible, i.e. upper, answer; both routes are LPs with 1e-7 feasibility
    # tolerances, so "at most" is checked to 1e-6 relative
    assert exact <= hi * (1 + 1e-6)
    assert exact == pytest.approx(hi, rel=1e-6)


def test_validator_lists_every_violation():
    v = allocation_view(load_instance(TWO))
    x = np.array(
        [[1.0, 0.5], [-0.1, 0.9]]
    )  # job A over time; v100 oversubscribed; a negative share
    kinds = sorted(b.kind for b in check_allocation(v, x))
    assert kinds == ["capacity", "negative", "time"]
    assert check_allocation(v, np.clip(x, 0, None) * [[0.5], [1.0]] * [[1.0, 0.4]]) == []
    for wrong in (np.array([[np.nan, 0.0], [0.0, 0.0]]), np.zeros((3, 2)), np.zeros((2, 2))[:, :1]):
        assert [b.kind for b in check_allocation(v, wrong)] == ["bad_allocation"]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 12), k=st.integers(1, 5))
def test_the_compiled_check_finds_what_the_array_expressions_find(seed, n, k):
    """check_allocation's one compiled pass against the base constraints written in numpy."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.2, 0.8, (n, k)) * (rng.random((n, k)) > 0.3)
    view = AllocationView(
        tuple(f"j{j}" for j in range(n)),
        tuple(f"t{r}" for r in range(k)),
        rng.integers(1, 6, k).astype(float),
        np.ones((n, k)),
        rng.choice([1.0, 2.0, 4.0], n),
        np.ones(n),
        np.full(n, np.nan),
        np.full(k, np.nan),
    )
    expected = (
        int((x < -TOL).sum())
        + int((x.sum(axis=1) > 1 + TOL).sum())
        + int((view.scale @ x > view.count + TOL * np.maximum(1, view.count)).sum())
    )
    assert len(check_allocation(view, x)) == expected


def test_a_maximizing_model_missing_a_constraint_is_caught():
    """The engine's checks work for maximization: a model without type_capacity claims more
    than is feasible, and the validator turns the result into an error."""
    spec = find_formulation("gavel-max-throughput", "pyomo")

    def broken(instance):
        m = spec.build(instance)
        m.type_capacity.deactivate()
        return m

    import dataclasses

    r = solve(load_instance(TWO), dataclasses.replace(spec, build=broken), "highs")
    assert r.status == Status.ERROR and "allocated >" in r.notes[0]


def test_allocate_cli_json_and_input_errors(capsys, tmp_path):
    assert main(["allocate", str(TWO), "--policy", "makespan", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"policy", "status", "objective", "allocation", "seconds"} <= set(out)
    assert out["objective"] == pytest.approx(400 / 7) and out["allocation"]["A"][
        "v100"
    ] == pytest.approx(0.25)
    data = json.loads(TWO.read_text())
    del data["jobs"][1]["throughput"]["k80"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["allocate", str(bad), "--policy", "max-min-fairness"]) == 2
    assert "$.jobs[1].throughput" in capsys.readouterr().err


FAST_CASES = [
    ("max-min-fairness", "hetsched"),
    ("max-min-fairness-perf", "hetsched"),
    ("max-min-fairness-perf", "gavel"),
    ("makespan", "hetsched"),
    ("min-total-duration", "hetsched"),
    ("max-throughput", "hetsched"),
    ("max-throughput", "gavel"),
    ("max-throughput-cost", "gavel"),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy,convention", FAST_CASES)
def test_fast_path_matches_the_pyomo_model(seed, policy, convention):
    from hetsched.gavel.fast import fast_solve

    inst = random_instance(200 + seed, n_jobs=4 + 2 * seed)
    # duplicate every job once: merging identical jobs must not change the optimum
    doubled = Instance(
        inst.name,
        inst.cluster,
        inst.jobs + tuple(Job(**{**j.__dict__, "id": j.id + "b"}) for j in inst.jobs),
    )
    same = policy in ("makespan", "min-total-duration")  # one definition: the model takes none
    options = {} if same else {"convention": convention}
    for case in (inst, doubled):
        ref = solve(case, f"gavel-{policy}", "highs", options=options)
        for merge in (True, False):
            fast = fast_solve(case, policy, merge=merge, convention=convention)
            assert fast.status == Status.OPTIMAL and fast.validation.valid
            assert fast.objective == pytest.approx(ref.objective, rel=1e-6)


def test_makespan_is_well_scaled_on_a_real_trace():
    """Regression: with z = 1/makespan unscaled (z ~ 1e-7) HiGHS returned a makespan 19% too long
    on Gavel's msr trace; the fast path and an unmerged solve disagreed with it."""
    from pathlib import Path

    from hetsched.gavel.fast import fast_solve
    from hetsched.instance.gavel_table import load_throughputs, load_trace

    gavel = Path(__file__).resolve().parents[2] / "data" / "gavel"
    inst = load_trace(
        gavel / "traces" / "msr_seed0_ed69ec.trace",
        load_throughputs(gavel / "simulation_throughputs.json"),
        {"v100": 50, "p100": 50, "k80": 50},
    )
    ref = solve(inst, "gavel-makespan", "highs")
    assert ref.status == Status.OPTIMAL
    assert ref.objective == pytest.approx(
        fast_solve(inst, "makespan", merge=False).objective, rel=1e-6
    )


def test_allocate_fast_flag_gives_the_same_answer(capsys):
    assert main(["allocate", str(TWO), "--policy", "makespan", "--json", "--fast"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert fast["status"] == "optimal" and fast["objective"] == pytest.approx(400 / 7)
    assert fast["solver"] == "highs-arrays"
    # the default takes the fast path where the policy has one; --reference solves the Pyomo
    # model, by Clarabel (REFERENCE_SOLVER: another solver than the fast path's, as a cross-check)
    assert main(["allocate", str(TWO), "--policy", "makespan", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["solver"] == "highs-arrays"
    assert main(["allocate", str(TWO), "--policy", "makespan", "--json", "--reference"]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert ref["solver"] == "clarabel" and ref["objective"] == pytest.approx(fast["objective"])
    # the throughput sum has a fast path too, with the Pyomo model's optimum
    assert main(["allocate", str(TWO), "--policy", "max-throughput", "--json"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert main(["allocate", str(TWO), "--policy", "max-throughput", "--json", "--reference"]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert fast["solver"] == "highs-arrays" and ref["solver"] == "clarabel"
    assert fast["objective"] == pytest.approx(ref["objective"], rel=1e-9)
    # a policy without a fast path (hetsched's throughput per dollar is a ratio): --fast refuses
    assert main(["allocate", str(TWO), "--policy", "max-throughput-cost", "--fast"]) == 2


def test_bench_gavel_quick(tmp_path, capsys):
    from pathlib import Path

    table = Path(__file__).resolve().parents[2] / "data" / "gavel" / "simulation_throughputs.json"
    out = tmp_path / "g.json"
    assert main(["bench", "gavel", "--quick", "--out", str(out), "--throughputs", str(table)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [r["jobs"] for r in runs] == [256, 256]
    for r in runs:  # every method finds the same optimum
        assert r["fast"]["objective"] == pytest.approx(r["pyomo"]["objective"], rel=1e-6)
        assert r["fast-unmerged"]["objective"] == pytest.approx(r["pyomo"]["objective"], rel=1e-6)


def ftf_instance(now: float, arrivals=(0.0, 20.0)) -> Instance:
    """A fast on the V100 (4 vs 1 steps/s), B on the K80 (1 vs 2); 100 steps each."""
    import dataclasses

    inst = load_instance(TWO)
    jobs = (
        dataclasses.replace(inst.jobs[0], arrival=arrivals[0]),
        dataclasses.replace(
            inst.jobs[1], arrival=arrivals[1], throughput={"v100": 1.0, "k80": 2.0}
        ),
    )
    return dataclasses.replace(inst, jobs=jobs, metadata={"now": now})


def test_finish_time_fairness_hand_checked():
    """t = 0: rho_j = thr_j(X^equal) / thr_j(X). A alone on the V100 and B alone on the K80 give
    2.5/4 and 1.5/2, and B cannot do better than its 2 steps/s, so rho* = 0.75."""
    from hetsched.gavel.ftf import finish_time_fairness

    r = finish_time_fairness(ftf_instance(now=0.0))
    assert (
        r.status == Status.OPTIMAL
        and r.objective == pytest.approx(0.75)
        and r.bound == pytest.approx(0.75)
    )


@pytest.mark.parametrize("now", [10.0, 60.0])
def test_finish_time_fairness_bisection_against_a_grid(now):
    """With waiting times the policy bisects on rho; compare with a fine grid over the
    allocations that keep both GPUs busy (A: a of the V100 and 1 - b of the K80; B: the rest)."""
    from hetsched.gavel.ftf import finish_time_fairness
    from hetsched.gavel.policies import rho_max

    inst = ftf_instance(now)
    fast, slow = finish_time_fairness(inst, route="fast"), finish_time_fairness(inst, route="pyomo")
    assert fast.status == Status.OPTIMAL and fast.gap <= 1e-8
    assert fast.objective == pytest.approx(slow.objective, rel=1e-7)
    assert fast.bound <= fast.objective
    view = allocation_view(inst)
    objective = rho_max(inst)
    grid = np.linspace(0, 1, 201)
    best = min(
        objective(view, np.array([[1 - b, a], [b, 1 - a]]))
        for a in grid
        for b in grid
        if (1 - b) + a <= 1 + 1e-12 and b + (1 - a) <= 1 + 1e-12
    )  # columns: k80, v100
    assert fast.objective <= best + 1e-9  # never worse than any grid point
    assert fast.objective >= best - 2e-2  # and the grid is fine enough to come close
    assert fast.bound <= best + 1e-9  # the bound is a real lower bound


def test_allocate_cli_finish_time_fairness(capsys):
    assert main(["allocate", str(TWO), "--policy", "finish-time-fairness", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["objective"] == pytest.approx(1.0)
