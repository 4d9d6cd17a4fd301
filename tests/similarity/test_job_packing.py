"""Job packing (AppSci'24 Algorithm 3): two exact methods agree, Algorithm 3 never beats them,
and its shipped counterexample is asserted *suboptimal* (proofs/similarity_packing.md)."""

import json

import numpy as np
import pytest
from support import INSTANCES

from hetsched.audit.packing import PROFILES, evaluate, make_instance, sample
from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.instance.io import instance_to_dict, load_instance, parse_instance
from hetsched.similarity.packing import (
    Packing,
    check_packing,
    greedy_packing,
    optimal_packing,
    packing_view,
)
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


def _algorithm_3_as_printed(view, gain_only: bool = False) -> Packing:
    """Line 6 pair by pair: for each solo job in order, the untaken queued job of the largest
    (own share, w), the first of equals."""
    taken, pairs = set(), []
    for a, s in enumerate(view.solo):
        best = None
        for b, q in enumerate(view.queue):
            w = view.gain[a, b]
            if b in taken or np.isnan(w) or (gain_only and w <= 0):
                continue
            key = (view.own[a, b], w)
            if best is None or key > best[0]:
                best = (key, b)
        if best is not None:
            taken.add(best[1])
            pairs.append((view.job_ids[s], view.job_ids[view.queue[best[1]]]))
    return Packing(tuple(pairs))


@pytest.mark.parametrize("seed", range(40))
def test_algorithm_3_reads_each_row_as_printed(seed):
    """Ties in the own share and in w (values drawn from a few levels), pairs that cannot share
    (NaN), more solo jobs than queued ones and the other way round."""
    from hetsched.similarity.packing.problem import PackingView

    rng = np.random.default_rng([seed, 3])
    n_solo, n_queue = (int(x) for x in rng.integers(0, 7, size=2))
    own = rng.choice([0.5, 0.7, 0.9], size=(n_solo, n_queue))
    gain = own + rng.choice([-0.4, 0.2, 0.5], size=own.shape) - 1.0
    cannot = rng.random(own.shape) < 0.3
    own[cannot], gain[cannot] = np.nan, np.nan
    ids = tuple(f"J{k}" for k in range(n_solo + n_queue))
    view = PackingView(
        ids,
        tuple(range(n_solo)),
        (),
        tuple(range(n_solo, n_solo + n_queue)),
        gain,
        own,
    )
    for gain_only in (False, True):
        assert greedy_packing(view, gain_only) == _algorithm_3_as_printed(view, gain_only)
