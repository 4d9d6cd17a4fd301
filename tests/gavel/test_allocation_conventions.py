"""Gavel's conventions in ``allocate`` (issue 19 item 4): closed forms on one GPU type, the
relation between the two conventions, a scipy LP check of the finish-time-fairness bisection,
and (when cvxpy is installed: the ``bench`` extra) Gavel's definitions written as cvxpy
programs and solved by ECOS, as Gavel's code does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.optimize import linprog
from test_allocation import random_instance

from hetsched.core.errors import InputError
from hetsched.gavel import allocation_view
from hetsched.gavel.allocate import allocate
from hetsched.gavel.conventions import (
    agnostic_view,
    fair_throughput,
    isolated_share,
    proportional_share,
    reference_type,
)
from hetsched.gavel.problem import effective_throughput, equal_share
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.solvers import Status


def one_type(seed: int, n_jobs: int, gpus: int, now: float = 0.0) -> Instance:
    """n jobs on ``gpus`` V100s: scale factors 1/2/4, weights 1-3, random throughputs and steps."""
    rng = np.random.default_rng(seed)
    cluster = Cluster(
        {"v100": GpuType("v100", cost_per_hour=2.5)},
        (Server("s", tuple(Gpu(f"g{i}", "v100", "s") for i in range(gpus))),),
    )
    jobs = tuple(
        Job(
            f"J{j}",
            float(rng.uniform(0, now)) if now else 0.0,
            float(rng.integers(1, 4)),
            1,
            1,
            {"v100": 1.0},
            {"v100": 0.0},
            requested_workers=int(rng.choice([1, 2, 4])),
            throughput={"v100": float(rng.uniform(0.5, 5.0))},
            epochs=float(rng.integers(1, 10)),
            iterations_per_epoch=100,
        )
        for j in range(n_jobs)
    )
    return Instance(f"one-type-{seed}", cluster, jobs, metadata={"now": now} if now else {})


def columns(inst: Instance):
    v = allocation_view(inst)
    return v, v.throughput[:, 0], v.scale, v.weight, v.steps, float(v.count.sum())


@pytest.mark.parametrize("seed", range(4))
def test_max_min_perf_on_one_type_is_the_closed_form(seed):
    """One type: Gavel's coefficient T s / (w thr(X^prop)) = s / w, so z* = min(N / sum w,
    min s / w); hetsched's value is Gavel's over f = min(1, N / sum s)."""
    inst = one_type(seed, n_jobs=6, gpus=4)
    _, _, s, w, _, n = columns(inst)
    gavel = allocate(inst, "max-min-fairness-perf", convention="gavel")
    ours = allocate(inst, "max-min-fairness-perf")
    expected = min(n / w.sum(), float(np.min(s / w)))
    assert gavel.status == Status.OPTIMAL and gavel.objective == pytest.approx(expected, rel=1e-9)
    assert ours.objective * min(1.0, n / s.sum()) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_the_conventions_differ_by_f_in_max_min_perf(seed):
    """On several types too: thr(X^equal) = f thr(X^prop), so the same LP scaled by 1 / f."""
    inst = random_instance(seed, 7)
    v = allocation_view(inst)
    f = min(1.0, float(v.count.sum() / v.scale.sum()))
    assert fair_throughput(v, "hetsched") == pytest.approx(f * fair_throughput(v, "gavel"))
    # the compiled normalizers are thr_j(X) of X^equal and of X^prop, to the bit
    for convention, x in (("hetsched", equal_share(v)), ("gavel", proportional_share(v))):
        assert np.array_equal(fair_throughput(v, convention), effective_throughput(v, x))
    for route in ("fast", "reference"):
        g = allocate(inst, "max-min-fairness-perf", convention="gavel", route=route)
        h = allocate(inst, "max-min-fairness-perf", route=route)
        assert g.objective == pytest.approx(f * h.objective, rel=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_raw_max_throughput_on_one_type_is_a_fractional_knapsack(seed):
    """max sum T_j x_j s.t. sum s_j x_j <= N, x_j <= 1: fill by T_j / s_j, largest first."""
    inst = one_type(seed, n_jobs=6, gpus=5)
    _, t, s, _, _, n = columns(inst)
    left, best = n, 0.0
    for j in np.argsort(-t / s, kind="stable"):
        x = min(1.0, left / s[j])
        best, left = best + t[j] * x, left - s[j] * x
    r = allocate(inst, "max-throughput", convention="gavel")
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(best, rel=1e-9)
    cost = allocate(inst, "max-throughput-cost", convention="gavel")  # linear: T / c
    assert cost.objective == pytest.approx(best / 2.5, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_min_total_duration_is_the_closed_form_on_the_reference_type(seed):
    """Every type at the V100 throughput: job j needs R_j / (T_j T) of the time by T, so
    T* = max(max_j R_j / T_j, sum_j s_j R_j / T_j / sum N)."""
    inst = random_instance(seed, 6)
    v = allocation_view(inst)
    t = v.throughput[:, v.types.index("v100")]
    expected = max(float(np.max(v.steps / t)), float(np.sum(v.scale * v.steps / t) / v.count.sum()))
    for route in ("fast", "reference"):
        r = allocate(inst, "min-total-duration", route=route)
        assert r.status == Status.OPTIMAL and r.objective == pytest.approx(expected, rel=1e-7)


def test_the_reference_type_and_its_refusals():
    inst = random_instance(0, 3)
    v = allocation_view(inst)
    assert v.types[reference_type(v)] == "v100"
    assert np.all(agnostic_view(v).throughput == v.throughput[:, [2]])
    no_v100 = dataclasses.replace(v, types=("a", "b", "c"))
    assert reference_type(no_v100) == 0  # the first type every job runs on
    zero = dataclasses.replace(no_v100, throughput=np.array([[0.0, 1, 1]] * 3))
    assert reference_type(zero) == 1
    with pytest.raises(InputError, match=r"\$\.jobs\[0\]\.throughput\.a"):
        reference_type(zero, "a")
    with pytest.raises(InputError, match="no GPU type runs every job"):
        reference_type(dataclasses.replace(zero, throughput=np.array([[0.0, 1, 1], [1, 0, 0]])))


def test_isolated_share_splits_the_cluster_per_job_and_fits():
    """Gavel's IsolatedPolicy: N_r / (n s_j), rows scaled down to 1; it never oversubscribes."""
    v = allocation_view(random_instance(3, 5))
    x = isolated_share(v)
    assert np.all(x.sum(axis=1) <= 1 + 1e-12)
    assert np.all(v.scale @ x <= v.count + 1e-9)
    uncapped = v.count[None, :] / (v.n_jobs * v.scale[:, None])
    rows = uncapped.sum(axis=1) <= 1
    assert np.allclose(x[rows], uncapped[rows])
    # hetsched's equal share is the same split times one global f
    assert np.allclose(equal_share(v).sum(axis=1), min(1.0, v.count.sum() / v.scale.sum()))


@pytest.mark.parametrize("seed", range(3))
def test_gavel_ftf_at_time_zero_is_the_closed_form(seed):
    """One type, t = 0: rho_j = c_j / x_j with c_j = min(1, N / (n s_j)), so
    rho* = max(sum_j s_j c_j / N, max_j c_j)."""
    inst = one_type(seed, n_jobs=5, gpus=3)
    _, _, s, _, _, n = columns(inst)
    c = np.minimum(1.0, n / (len(s) * s))
    r = allocate(inst, "finish-time-fairness", convention="gavel")
    expected = max(float(np.sum(s * c) / n), float(np.max(c)))
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(expected, rel=1e-9)


def ftf_feasible(inst: Instance, rho: float, agnostic: bool) -> bool:
    """Is max_j rho_j <= rho reachable under Gavel's definition? One scipy LP (no hetsched code
    but the view): thr_j(X) >= R_j / (rho D_j - t_j), D_j = R_j / thr_j(X^iso)."""
    v = allocation_view(inst)
    if agnostic:
        v = agnostic_view(v)
    now = inst.metadata.get("now", 0.0)
    t = np.maximum(0.0, now - np.array([j.arrival for j in inst.jobs]))
    d = v.steps / np.sum(v.throughput * isolated_share(v), axis=1)
    slack = rho * d - t
    if np.any(slack <= 0):
        return False
    n, k = v.throughput.shape
    rows, rhs = [], []
    for j in range(n):  # -thr_j <= -need_j ; sum_r x_j <= 1
        a = np.zeros(n * k)
        a[j * k : (j + 1) * k] = -v.throughput[j]
        rows.append(a)
        rhs.append(-v.steps[j] / slack[j])
        b = np.zeros(n * k)
        b[j * k : (j + 1) * k] = 1
        rows.append(b)
        rhs.append(1.0)
    for r in range(k):
        a = np.zeros(n * k)
        a[r::k] = v.scale
        rows.append(a)
        rhs.append(v.count[r])
    res = linprog(np.zeros(n * k), A_ub=np.array(rows), b_ub=np.array(rhs), method="highs")
    return res.status == 0


@pytest.mark.parametrize("agnostic", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_gavel_ftf_bisection_is_tight_against_scipy(seed, agnostic):
    """With waiting times: rho* (1 + 1e-6) is feasible and rho* (1 - 1e-6) is not."""
    inst = dataclasses.replace(random_instance(seed, 5), metadata={"now": 400.0})
    inst = dataclasses.replace(
        inst,
        jobs=tuple(dataclasses.replace(j, arrival=100.0 * i) for i, j in enumerate(inst.jobs)),
    )
    policy = "finish-time-fairness-agnostic" if agnostic else "finish-time-fairness"
    r = allocate(inst, policy, convention="gavel")
    assert r.status == Status.OPTIMAL and r.bound <= r.objective
    assert ftf_feasible(inst, r.objective * (1 + 1e-6), agnostic)
    assert not ftf_feasible(inst, r.objective * (1 - 1e-6), agnostic)
    ref = allocate(inst, policy, convention="gavel", route="reference")
    assert ref.objective == pytest.approx(r.objective, rel=1e-6)


def test_cli_takes_the_convention(capsys):
    import json

    from support import instance_path

    from hetsched.cli import main

    path = str(instance_path("gavel_two_jobs.json"))
    args = ["allocate", path, "--policy", "max-throughput", "--convention", "gavel", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["convention"] == "gavel" and out["status"] == "optimal"
    with pytest.raises(SystemExit) as e:
        main(["allocate", path, "--policy", "max-throughput", "--convention", "nope"])
    assert e.value.code == 2


def gavel_cvxpy(inst: Instance, policy: str) -> float:
    """Gavel's definition of ``policy`` as a cvxpy program (its code's objectives and base
    constraints, written from its ``scheduler/policies``), solved by ECOS as Gavel does."""
    cp = pytest.importorskip("cvxpy")
    v = allocation_view(inst)
    if policy in ("min-total-duration", "finish-time-fairness-agnostic"):
        v = agnostic_view(v)
    x = cp.Variable(v.throughput.shape)
    s = np.tile(v.scale[:, None], (1, len(v.types)))
    base = [x >= 0, cp.sum(cp.multiply(s, x), axis=0) <= v.count, cp.sum(x, axis=1) <= 1]
    thr = cp.sum(cp.multiply(v.throughput, x), axis=1)
    if policy == "max-min-fairness-perf":
        prop = v.throughput @ (v.count / v.count.sum())
        a = v.throughput * (v.scale / v.weight / prop)[:, None]
        objective = cp.Maximize(cp.min(cp.sum(cp.multiply(a, x), axis=1)))
    elif policy == "max-throughput":
        objective = cp.Maximize(cp.sum(thr))
    elif policy == "max-throughput-cost":
        objective = cp.Maximize(cp.sum(cp.multiply(v.throughput / v.cost[None, :], x)))
    elif policy in ("makespan", "min-total-duration"):  # steps in units of the largest (ECOS)
        unit = float(np.max(v.steps))
        objective = cp.Minimize(unit * cp.max(cp.multiply(v.steps / unit, cp.inv_pos(thr))))
    else:  # finish-time fairness, Gavel's rho with its isolated share and I_j = 0
        now = inst.metadata.get("now", 0.0)
        t = np.maximum(0.0, now - np.array([j.arrival for j in inst.jobs]))
        iso = np.sum(v.throughput * isolated_share(v), axis=1)
        unit = float(np.max(v.steps))  # seconds in units of the largest R_j (ECOS)
        rho = (t / unit + cp.multiply(v.steps / unit, cp.inv_pos(thr))) / (v.steps / unit / iso)
        objective = cp.Minimize(cp.max(rho))
    problem = cp.Problem(objective, base)
    problem.solve(solver="ECOS")
    if problem.status != "optimal" and "CLARABEL" in cp.installed_solvers():
        problem.solve(solver="CLARABEL")  # ECOS can stop "inaccurate" on real traces' numbers
    assert problem.status == "optimal"
    return float(problem.value)


GAVEL_POLICIES = (
    "max-min-fairness-perf",
    "max-throughput",
    "max-throughput-cost",
    "makespan",
    "min-total-duration",
    "finish-time-fairness",
    "finish-time-fairness-agnostic",
)


@pytest.mark.parametrize("policy", GAVEL_POLICIES)
@pytest.mark.parametrize("seed", range(3))
def test_the_gavel_convention_equals_gavels_definition_solved_by_ecos(seed, policy):
    """Objectives equal to 1e-6 (relative), with and without waiting times."""
    inst = random_instance(seed, 8)
    if seed:
        inst = dataclasses.replace(
            inst,
            jobs=tuple(dataclasses.replace(j, arrival=50.0 * i) for i, j in enumerate(inst.jobs)),
            metadata={"now": 400.0},
        )
    expected = gavel_cvxpy(inst, policy)
    r = allocate(inst, policy, convention="gavel")
    assert r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(expected, rel=1e-6)
