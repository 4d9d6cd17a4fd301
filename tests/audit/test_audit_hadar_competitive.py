"""Hadar Theorem 2 (2 alpha competitive): the audit, its findings about the proof, and properties
of the online run against the offline optimum and the dual certificates."""

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import INSTANCES

from hetsched.audit.engine import Profile
from hetsched.audit.hadar_competitive import (
    PROFILES,
    allocation_cost_ratio,
    alone_finish,
    evaluate,
    reductions,
    sample,
)
from hetsched.core.runstore import RunStore
from hetsched.exact.solve import solve
from hetsched.hadar.certificate import certify_online
from hetsched.hadar.online import hadar_online
from hetsched.hadar.price import eta_from_proof, price_function
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import instance_to_dict, load_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.solvers.result import Status

STEP9 = INSTANCES / "audit" / "hadar_thm2_step9.json"


def test_step_9_fails_on_the_smallest_instance():
    """One GPU, one job: D_0 = T c U_min = 9/8 > OPT/2 = 3/4 (the eta condition forgets sum over t)."""
    inst = load_instance(STEP9)
    v = hadar_view(inst)
    assert v.capacity.tolist() == [[1]] and v.n_jobs == 1 and v.horizon == 3
    eta = eta_from_proof(v)
    assert eta == pytest.approx(2 / 3)  # C / (t_max W) = 1 / 1.5
    prices = price_function(v, None, eta=eta)
    assert prices.u_min == pytest.approx(3 / 8) and prices.u_max == pytest.approx(2.0)
    opt = solve(inst, "hadar-p1", "highs")
    assert opt.status == Status.OPTIMAL and opt.objective == pytest.approx(1.5)
    d0 = v.horizon * v.capacity.sum() * prices.u_min
    assert d0 == pytest.approx(9 / 8) and d0 > opt.objective / 2  # step (9) is violated
    ev = evaluate(inst, PROFILES["ci"])
    assert (
        ev.checks["d0_half_opt"] == pytest.approx(1.5)
        and ev.ratio == pytest.approx(1.0)
        and ev.ratio <= ev.bound
    )


def test_definition_1_fails_for_a_one_gpu_allocation():
    """c = 1, a job taking the GPU: (c/alpha)(k(1) - k(0)) / k(0) = (rho - 1) / ln rho > 1, rho = U_max/U_min = 4."""
    inst = Instance(
        "def1",
        Cluster({"k80": GpuType("k80")}, (Server("m0", (Gpu("g", "k80", "m0"),)),)),
        (
            Job(
                "J",
                0.0,
                1.0,
                1,
                1,
                {"k80": 1.0},
                {"k80": 0.0},
                requested_workers=1,
                epochs=1.0,
                iterations_per_epoch=1,
                throughput={"k80": 1.0},
            ),
        ),
        metadata={"hadar": {"slot_seconds": 1.0, "progress": "bottleneck", "horizon_slots": 1}},
    )
    v = hadar_view(inst)
    prices = price_function(v, None, eta=eta_from_proof(v))
    assert prices.u_max / prices.u_min == pytest.approx(4.0)
    run = hadar_online(inst, eta=eta_from_proof(v))
    assert run.finish == {"J": 1}
    assert allocation_cost_ratio(v, run.decisions, prices) == pytest.approx(3 / math.log(4))


def test_audit_cli_reports_the_proof_steps(tmp_path, capsys):
    from hetsched.cli import main

    assert (
        main(
            [
                "audit",
                "hadar-competitive",
                "--trials",
                "6",
                "--out",
                str(tmp_path),
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["claim"] == "hadar-competitive" and out["trials"] == 6 and out["evaluated"] == 6
    assert out["violations"] == 0 and 1.0 <= out["worst_ratio"] <= out["bound_at_worst"]
    assert set(out["checks"]) == {"d0_half_opt", "definition1"}
    assert (
        out["checks"]["definition1"]["violations"] == 6
    )  # every run allocates, and every allocation breaks it
    # the trials keep the Hadar metadata (slot length, horizon) they were evaluated with
    log = RunStore(tmp_path / "hadar-competitive-ci-s0" / "trials.jsonl", ("trial",))
    first = next(log.rows())
    assert first["instance"]["metadata"]["hadar"]["horizon_slots"] == first["details"]["horizon"]


def test_reductions_stay_in_the_family_and_do_not_touch_the_original():
    inst = sample(np.random.default_rng(3), PROFILES["ci"])
    before = instance_to_dict(inst)
    smaller = reductions(inst)
    assert smaller and instance_to_dict(inst) == before
    assert any(
        s.metadata["hadar"]["horizon_slots"] < inst.metadata["hadar"]["horizon_slots"]
        for s in smaller
    )


@given(st.integers(0, 10_000))
def test_online_is_feasible_and_below_every_certificate(seed):
    """ALG <= OPT(P1) <= LP(P2) <= D(k at the online prices); every job could finish alone by T."""
    inst = sample(np.random.default_rng(seed), Profile(trials=1, max_tasks=4, time_limit=20.0))
    v = hadar_view(inst)
    assert all(alone_finish(v, j) <= v.horizon for j in range(v.n_jobs))
    run = hadar_online(inst)
    online = validate_decisions(inst, run.decisions)
    assert online.valid
    opt = solve(inst, "hadar-p1", "highs", time_limit=20)
    assert opt.status == Status.OPTIMAL
    cert = certify_online(inst, run, tight=True)
    tol = 1e-6 * max(1.0, opt.objective)
    assert online.utility <= opt.objective + tol
    assert (
        opt.objective <= cert.lp_bound + tol and cert.lp_bound <= cert.dual_at_online_prices + tol
    )
    assert cert.offline_primal <= opt.objective + tol


def test_with_a_horizon_the_literal_claim_fails():
    """A job that cannot finish by T looks best to the online algorithm: ALG = 0 < OPT = 1."""
    inst = load_instance(INSTANCES / "audit" / "hadar_thm2_horizon.json")
    run = hadar_online(inst)
    online = validate_decisions(inst, run.decisions)
    assert (
        online.valid and online.utility == 0.0 and run.decisions["J0"] == {1: {("m0", "v100"): 1}}
    )
    opt = solve(inst, "hadar-p1", "highs")
    assert opt.status == Status.OPTIMAL and opt.objective == pytest.approx(1.0)
    v = hadar_view(inst)
    assert (
        alone_finish(v, 0) > v.horizon
    )  # outside the audited family, which is why the audit skips it
    assert evaluate(inst, PROFILES["ci"]).ratio is None


def test_theorem_2_fails_even_when_every_job_can_finish_by_t_alone():
    """instances/audit/hadar_thm2_counterexample.json: 2 GPUs, 3 jobs, T = 5. Online: 0; OPT = 19/3."""
    inst = load_instance(INSTANCES / "audit" / "hadar_thm2_counterexample.json")
    v = hadar_view(inst)
    assert all(
        alone_finish(v, j) <= v.horizon for j in range(v.n_jobs)
    )  # inside the audited family
    eta = eta_from_proof(v)
    run = hadar_online(inst, eta=eta)
    online = validate_decisions(inst, run.decisions)
    assert online.valid and online.utility == 0.0 and online.finish == {}
    # round 3: the DP skips J2 (first in the queue) so that J1 gets the P100, leaving the V100 idle;
    # round 5: J2 takes the P100 and J1 the V100 -- neither finishes by T
    assert run.decisions["J1"][5] == {("m0", "v100"): 1} and run.decisions["J2"][5] == {
        ("m0", "p100"): 1
    }
    opt = solve(inst, "hadar-p1", "highs")
    assert opt.status == Status.OPTIMAL and opt.objective == pytest.approx(19 / 3)
    ev = evaluate(inst, PROFILES["ci"])
    assert ev.ratio == math.inf and ev.bound == pytest.approx(
        2 * price_function(v, None, eta=eta).alpha
    )
    assert ev.bound < 9  # 2 alpha ~ 8.19: the claimed bound is finite, the ratio is not
