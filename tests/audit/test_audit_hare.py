"""The audit of Hare's Theorem 4 and what it found, kept as regression tests.

The finding contradicts the paper, so it is asserted as such: on the shipped counterexample
Algorithm 1 *exceeds* alpha(2 + alpha) OPT. See proofs/hare_theorem4.md.
"""

import json

import pytest
from hypothesis import given
from support import instance_path

from hetsched.audit.claims import claims, find_claim
from hetsched.audit.engine import run_audit, shrink
from hetsched.audit.hare import PROFILES, evaluate, proof_checks
from hetsched.cli import main
from hetsched.core.runstore import RunStore
from hetsched.exact.solve import solve
from hetsched.hare.algorithm1 import alpha, hare_alg1, task_priorities
from hetsched.hare.heuristic import run_heuristic
from hetsched.hare.orderings import starts_in_d_order
from hetsched.hare.view import hare_view
from hetsched.instance.io import load_instance
from hetsched.solvers import Status
from hetsched.testing.strategies import hare_instances

COUNTEREXAMPLE = "hare_thm4_counterexample.json"


def test_counterexample_violates_theorem4(manifest):
    inst = load_instance(instance_path(COUNTEREXAMPLE))
    opt = manifest[COUNTEREXAMPLE]["optimum"]
    assert opt == 258.0  # proven by both exact methods (test_exact checks the manifest)
    view = hare_view(inst)
    a = alpha(view)
    assert a == 1.0
    res = run_heuristic(inst, order="hare-sched-rl")  # the paper's Algorithm 1, as printed
    assert res.validation.valid
    assert res.bound == pytest.approx(245.35)  # Hare_Sched_RL, a valid lower bound
    assert res.objective == 851.0
    assert res.objective > a * (2 + a) * opt  # the claimed bound IS violated: 851 > 3 * 258


def test_counterexample_breaks_lemma2_not_lemma3():
    inst = load_instance(instance_path(COUNTEREXAMPLE))
    view = hare_view(inst)
    rl = solve(inst, "hare-sched-rl", "highs")
    x_hat = starts_in_d_order(view, rl.solution)
    # J2's three tasks all start at x^ = 0 in the relaxation: (9) holds only for the whole set
    assert sorted(x_hat[1:4].tolist()) == [0.0, 0.0, 0.0]
    checks = proof_checks(view, hare_alg1(view, task_priorities(view, x_hat)))
    assert checks["lemma2"] > 1  # (10) fails: J2's load 15 > 2 H = 5
    assert checks["lemma3"] <= 1  # (14) holds


def test_subset_inequalities_restore_the_bound_on_the_counterexample(manifest):
    inst = load_instance(instance_path(COUNTEREXAMPLE))
    res = run_heuristic(inst, order="hare-sched-rl-subsets")
    assert res.objective <= 3 * manifest[COUNTEREXAMPLE]["optimum"]
    assert res.bound <= manifest[COUNTEREXAMPLE]["optimum"]


def test_shrink_keeps_the_violation_and_makes_the_instance_smaller():
    claim = find_claim("hare-alg1")
    inst = load_instance(instance_path(COUNTEREXAMPLE))
    small, ev = shrink(claim, inst, PROFILES["ci"])
    assert ev.ratio > ev.bound
    assert claim.size(small) < claim.size(inst)


def test_audit_cli_json_keys_and_resume(tmp_path, capsys):
    argv = [
        "audit",
        "hare-alg1",
        "--trials",
        "4",
        "--seed",
        "3",
        "--out",
        str(tmp_path),
        "--json",
        "--quiet",
    ]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    for key in ("claim", "trials", "worst_ratio", "bound_at_worst", "violations", "worst_instance"):
        assert key in first
    assert (
        first["claim"] == "hare-alg1"
        and first["trials"] == 4
        and first["evaluated"] + first["skipped"] == 4
    )
    assert load_instance(first["worst_instance"])  # saved as an instance file
    log = tmp_path / "hare-alg1-ci-s3" / "trials.jsonl"
    assert len(log.read_text().splitlines()) == 1 + 4  # its settings, then one line a trial
    assert main(argv) == 0  # resume: nothing recomputed, same report
    again = json.loads(capsys.readouterr().out)
    assert len(log.read_text().splitlines()) == 1 + 4
    assert again["worst_ratio"] == first["worst_ratio"]


def test_audit_is_deterministic_for_a_seed(tmp_path):
    claim = find_claim("hare-alg1")
    a = run_audit(claim, trials=3, seed=5, out_dir=tmp_path / "a")
    b = run_audit(claim, trials=3, seed=5, out_dir=tmp_path / "b")
    la = list(RunStore(a["log"], ("trial",)).rows())
    lb = list(RunStore(b["log"], ("trial",)).rows())
    assert [r["ratio"] for r in la] == [r["ratio"] for r in lb]
    assert [r["instance"]["jobs"] for r in la] == [r["instance"]["jobs"] for r in lb]


def test_every_claim_has_both_profiles():
    for claim in claims().values():
        assert {"ci", "deep"} <= set(claim.profiles) <= {"ci", "deep", "large"}


@pytest.mark.deep
@pytest.mark.parametrize("name", ["hare-alg1", "hare-alg1-subsets"])
def test_deep_audit(name, tmp_path):
    """The deep search (minutes): for the paper's algorithm it finds violations; it must never
    find an instance where (22) fails while (10) and (14) hold (proofs/hare_theorem4.md)."""
    report = run_audit(find_claim(name), profile="deep", seed=1, out_dir=tmp_path)
    log = [json.loads(x) for x in open(report["log"])]
    for rec in log:
        if (
            rec["ratio"] is not None
            and rec["checks"]["lemma2"] <= 1
            and rec["checks"]["lemma3"] <= 1
        ):
            assert rec["checks"]["eq22"] <= 1 + 1e-9 and rec["ratio"] <= rec["bound"] * (1 + 1e-9)
    if name == "hare-alg1":
        assert report["violations"] > 0
    else:  # Theorem 4' (proved): x~ <= 3 alpha H on every task, ratio <= max(3a, a(1 + 3a/2))
        from hetsched.audit.hare import subsets_ratio

        for rec in log:
            if rec["ratio"] is not None:
                assert rec["checks"]["start_3alpha"] <= 1 + 1e-6
                assert rec["ratio"] <= subsets_ratio(rec["details"]["alpha"]) * (1 + 1e-6)


@given(
    hare_instances(
        max_gpus=3, max_types=2, max_jobs=3, max_rounds=2, max_tasks_per_round=3, max_tasks=7
    )
)
def test_property_rl_le_opt_le_alg1_and_the_proof_steps(inst):
    """On every instance: RL <= OPT <= Alg. 1; Lemma 3 (14) holds (not refuted); and whenever
    (10) and (14) hold, so do (22) and Theorem 4 -- the last step of the proof is sound."""
    ev = evaluate(inst, PROFILES["ci"])
    if ev.ratio is None:  # a reference not proven in the time limit: no evidence
        return
    d = ev.details
    assert d["rl"] <= d["opt"] * (1 + 1e-6) + 1e-6 and d["opt"] <= d["alg1"] * (1 + 1e-6) + 1e-6
    assert ev.checks["lemma3"] <= 1 + 1e-9
    if ev.checks["lemma2"] <= 1 + 1e-9:
        assert ev.checks["eq22"] <= 1 + 1e-9
        assert ev.ratio <= ev.bound * (1 + 1e-9)


@given(
    hare_instances(
        max_gpus=1,
        max_types=1,
        max_jobs=3,
        max_rounds=2,
        max_tasks_per_round=3,
        max_tasks=7,
        with_sync=False,
    )
)
def test_property_one_gpu_no_sync_subsets_give_a_3_approximation(inst):
    """Proved in proofs/hare_theorem4.md (Proposition): one GPU, T^s = 0, H from
    hare-sched-rl-subsets -> sum w C(Alg. 1) <= 3 RL_subsets <= 3 OPT."""
    res = run_heuristic(inst, order="hare-sched-rl-subsets")
    assert res.bound is not None
    assert res.objective <= 3 * res.bound * (1 + 1e-9) + 1e-9
    opt = solve(inst, "hare-sched", "cpsat")
    # a MILP bound is exact up to the solver's tolerances (absolute gap 1e-6): compare at 1e-6
    assert opt.status == Status.OPTIMAL and res.bound <= opt.objective * (1 + 1e-6) + 1e-6


def test_lemma2_fails_on_two_gpus_even_with_every_subset_inequality(manifest):
    """proofs/hare_lemma2.md, gap (b): (10) uses Algorithm 1's assignment, not the relaxation's."""
    name = "hare_lemma2_two_gpus.json"
    inst = load_instance(instance_path(name))
    view = hare_view(inst)
    rl = solve(inst, "hare-sched-rl-subsets", "highs")
    assert rl.status == Status.OPTIMAL and rl.objective == pytest.approx(3.5)
    run = hare_alg1(view, task_priorities(view, starts_in_d_order(view, rl.solution)))
    checks = proof_checks(view, run)
    assert checks["lemma2"] == pytest.approx(1.5)  # load 3 > 2 H = 2: (10) is violated
    assert run.objective() == manifest[name]["optimum"] == 4.0  # yet Algorithm 1 is optimal here


@given(
    hare_instances(
        max_gpus=3,
        max_types=1,
        max_jobs=3,
        max_rounds=1,
        max_tasks_per_round=3,
        max_tasks=7,
        with_sync=False,
    )
)
def test_property_identical_gpus_one_round_subsets_give_a_3_approximation(inst):
    """Proved in proofs/hare_theorem4.md (Proposition 2): identical GPUs, one round per job,
    T^s = 0, H from hare-sched-rl-subsets -> sum w C(Alg. 1) <= 3 RL_subsets."""
    res = run_heuristic(inst, order="hare-sched-rl-subsets")
    assert res.bound is not None and res.validation.valid
    assert res.objective <= 3 * res.bound * (1 + 1e-9) + 1e-9


def _cpsat_stopped_at(monkeypatch, objective, bound):
    """CP-SAT as if stopped by its time limit with this incumbent and bound."""
    import dataclasses

    import hetsched.audit.hare as hare_audit

    real = hare_audit.solve

    def fake(inst, model, solver, **kw):
        r = real(inst, model, solver, **kw)
        if solver == "cpsat":
            r = dataclasses.replace(r, status=Status.TIME_LIMIT, objective=objective, bound=bound)
        return r

    monkeypatch.setattr(hare_audit, "solve", fake)


@pytest.mark.parametrize(
    "incumbent,cpsat_bound,ratio_is,ratio",
    [
        (258.0, 200.0, "lower estimate: the bound fails", 851 / 258),  # 851 > 3 * 258 >= 3 OPT
        (300.0, 250.0, "undecided", None),  # 3 * 250 < 851 <= 3 * 300: the bounds cannot tell
        (300.0, 290.0, "upper estimate: the bound holds", 851 / 290),  # 851 <= 3 * 290 <= 3 OPT
    ],
)
def test_an_unproven_optimum_decides_the_ratio_only_where_the_bounds_do(
    monkeypatch, incumbent, cpsat_bound, ratio_is, ratio
):
    """audit.hare.evaluate beyond CP-SAT's reach: Alg. 1 (851 on the Theorem 4 counterexample,
    alpha(2+alpha) = 3) against LB = max(RL, CP-SAT's bound) <= OPT <= CP-SAT's incumbent."""
    _cpsat_stopped_at(monkeypatch, incumbent, cpsat_bound)
    ev = evaluate(load_instance(instance_path(COUNTEREXAMPLE)), PROFILES["ci"])
    assert ev.details["alg1"] == 851.0 and ev.details["ratio_is"] == ratio_is
    assert ev.ratio == (None if ratio is None else pytest.approx(ratio))


def test_the_large_profile_keeps_its_instances_between_20_and_40_tasks():
    import numpy as np

    from hetsched.audit.hare import mutate, sample

    prof = PROFILES["large"]
    rng = np.random.default_rng(0)
    for _ in range(5):
        inst = sample(rng, prof)
        for _ in range(5):
            assert 20 <= sum(j.n_tasks for j in inst.jobs) <= 40
            inst = mutate(inst, rng, prof)


def test_a_claim_without_the_profile_is_refused_in_one_line(capsys):
    assert main(["audit", "packing", "--profile", "large"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--profile" in err[0] and "packing" in err[0]


@given(
    hare_instances(
        max_gpus=3, max_types=3, max_jobs=3, max_rounds=3, max_tasks_per_round=2, max_tasks=8
    )
)
def test_property_theorem4_prime_with_every_subset_inequality(inst):
    """proofs/hare_theorem4.md, Theorem 4' (proved): with H from hare-sched-rl-subsets, on any
    GPUs, rounds and sync, x~_i <= 3 alpha H_i for every task and
    sum w C(Alg. 1) <= max(3 alpha, alpha (1 + 3 alpha / 2)) RL_subsets (= alpha (2 + alpha) at
    alpha = 1 and below it up to alpha = 2)."""
    from hetsched.audit.hare import subsets_ratio

    view = hare_view(inst)
    a = alpha(view)
    if a == float("inf"):
        return  # sync 0 on one type and > 0 on another: nothing is claimed
    rl = solve(inst, "hare-sched-rl-subsets", "highs", time_limit=30, threads=1)
    assert rl.status == Status.OPTIMAL
    run = hare_alg1(view, task_priorities(view, starts_in_d_order(view, rl.solution)))
    # RL comes from a MILP solved to HiGHS's tolerances: compare at 1e-6
    assert proof_checks(view, run)["start_3alpha"] <= 1 + 1e-6
    assert run.objective() <= subsets_ratio(a) * rl.objective * (1 + 1e-6) + 1e-6
    assert subsets_ratio(a) <= a * (2 + a) or a > 2
