"""Job packing (AppSci'24 Algorithm 3): two exact methods agree, Algorithm 3 never beats them,
and its shipped counterexample is asserted *suboptimal* (proofs/similarity_packing.md)."""

import json

import numpy as np
import pytest
from conftest import INSTANCES

from hetsched.audit.packing import PROFILES, evaluate, make_instance, sample
from hetsched.cli import main
from hetsched.errors import InputError
from hetsched.instance.io import instance_to_dict, load_instance, parse_instance
from hetsched.packing import Packing, check_packing, greedy_packing, optimal_packing, packing_view
from hetsched.solve import solve
from hetsched.solvers import Status

COUNTEREXAMPLE = INSTANCES / "audit" / "packing_alg3_counterexample.json"


@pytest.mark.parametrize("seed", range(12))
def test_assignment_milp_and_scipy_agree_and_bound_algorithm_3(seed):
    inst = sample(np.random.default_rng([seed, 77]), PROFILES["deep"])
    view = packing_view(inst)
    scipy_value = check_packing(inst, optimal_packing(view))
    milp = solve(inst, "job-packing", "highs")
    assert milp.status == Status.OPTIMAL and milp.validation.valid
    assert milp.objective == pytest.approx(scipy_value.objective, abs=1e-9)  # two exact methods
    for repaired in (False, True):
        greedy = check_packing(inst, greedy_packing(view, gain_only=repaired))
        assert (
            greedy.valid and greedy.objective <= scipy_value.objective + 1e-9
        )  # a heuristic is <= OPT (max)


def test_counterexample_algorithm_3_is_not_optimal():
    inst = load_instance(COUNTEREXAMPLE)
    view = packing_view(inst)
    greedy = greedy_packing(view)
    assert greedy.pairs == (("S0", "Q1"),)  # keeps S0 fastest, as line 6 asks
    assert optimal_packing(view).pairs == (("S0", "Q0"),)
    g, o = check_packing(inst, greedy), check_packing(inst, optimal_packing(view))
    assert o.objective / g.objective == pytest.approx(1.2094, abs=1e-4)
    assert (
        greedy_packing(view, gain_only=True) == greedy
    )  # the repair does not help here: the order of line 6 is the cause
    ev = evaluate(inst, PROFILES["ci"])
    assert ev.ratio > ev.bound  # the claim IS violated


def test_memory_and_unmeasured_pairs_forbid_sharing():
    models = ["ResNet-18 (batch size 32)", "ResNet-50 (batch size 32)"]
    inst = make_instance(
        ["k80"], models[:1], models[1:], memory=[7.0, 6.0]
    )  # 13 GB > a K80's 12 GB
    view = packing_view(inst)
    assert np.isnan(view.gain).all()
    assert optimal_packing(view).pairs == () and greedy_packing(view).pairs == ()
    report = check_packing(inst, Packing((("S0", "Q0"),)))
    assert not report.valid and report.violations[0].kind == "cannot_share"


def test_check_rejects_bad_packings():
    inst = load_instance(COUNTEREXAMPLE)
    for pairs, kind in (
        [(("Q0", "Q1"),), "not_solo"],
        [(("S0", "S0"),), "not_queued"],
        [(("S0", "Q0"), ("S0", "Q1")), "twice"],
    ):
        report = check_packing(inst, Packing(pairs))
        assert not report.valid and kind in {v.kind for v in report.violations}


def test_missing_fields_are_named():
    d = instance_to_dict(load_instance(COUNTEREXAMPLE))
    d["jobs"][1].pop("memory_gb")
    with pytest.raises(InputError, match=r"jobs\[1\].memory_gb"):
        packing_view(parse_instance(d, source="x"))
    d = instance_to_dict(load_instance(COUNTEREXAMPLE))
    d["metadata"] = {}
    with pytest.raises(InputError, match="metadata.packing.scheduled"):
        packing_view(parse_instance(d, source="x"))


def test_audit_packing_cli(tmp_path, capsys):
    assert (
        main(["audit", "packing", "--trials", "40", "--out", str(tmp_path), "--quiet", "--json"])
        == 0
    )  # a finding is a result
    out = json.loads(capsys.readouterr().out)
    assert {
        "claim",
        "trials",
        "worst_ratio",
        "bound_at_worst",
        "violations",
        "worst_instance",
    } <= set(out)
    assert out["claim"] == "packing" and out["violations"] > 0 and out["worst_ratio"] > 1
