"""The AppSci'24 round-based similarity policy simulated: consistency, determinism, a
hand-checkable single job, packing and the exact rounds, the command line."""

from __future__ import annotations

import json

import pytest

from hetsched.cli import main
from hetsched.errors import InputError
from hetsched.sim.similarity import SimilarityWorkload, similarity_workload, simulate_similarity
from hetsched.similarity.reference import gavel_reference_db, parse_row


def test_one_job_alone_runs_at_its_true_rate():
    """One job, one V100: it trains at the table's rate from time 0 and finishes mid-round."""
    row = "ResNet-18 (batch size 64)"
    rate = gavel_reference_db().get(row).throughput[("v100", 1)] * parse_row(row)[1]
    wl = SimilarityWorkload(
        "one",
        {"v100": 1},
        (
            {
                "id": "J0",
                "row": row,
                "workers": 1,
                "samples": rate * 500.0,
                "memory_gb": 4.0,
                "arrival": 0.0,
            },
        ),
    )
    res = simulate_similarity(wl, "gpu_ngpu")
    assert res["jobs"][0]["completion"] == pytest.approx(500.0)
    assert res["metrics"]["makespan"] == pytest.approx(500.0)
    assert res["metrics"]["utilization"] == pytest.approx(1.0)


@pytest.mark.parametrize("variant", ["gpu", "gpu_ngpu", "gpu_ngpu_bs"])
def test_runs_are_consistent_and_deterministic(variant):
    wl = similarity_workload(2, n_jobs=15, arrival_span_minutes=7)
    a = simulate_similarity(wl, variant, packing=True)
    assert a == simulate_similarity(wl, variant, packing=True)
    for row in a["jobs"]:
        assert row["arrival"] <= row["start"] < row["completion"]
    m = a["metrics"]
    assert 0 < m["utilization"] <= 1 + 1e-9
    assert m["makespan"] >= max(r["completion"] - r["arrival"] for r in a["jobs"]) - 1e-6


def test_rounds_that_change_decisions_shorten_the_makespan_here():
    """The paper's 'cd' effect (Fig. 6: about 29-33% shorter makespan) on a static workload;
    asserted only as a direction on this seeded instance, with the measured numbers in docs."""
    wl = similarity_workload(0, n_jobs=30)
    cd = simulate_similarity(wl, "gpu_ngpu")["metrics"]["makespan"]
    fixed = simulate_similarity(wl, "gpu_ngpu", change_decisions=False)["metrics"]["makespan"]
    assert cd < fixed


def test_exact_rounds_use_the_solver_and_stay_valid():
    wl = similarity_workload(1, n_jobs=10)
    for mode in ("truth", "estimated"):
        res = simulate_similarity(wl, "gpu_ngpu", packing=True, exact=mode)
        assert res["policy"].endswith(f"exact-{mode}") and all(r["completion"] for r in res["jobs"])


def test_similarity_sim_command(tmp_path, capsys):
    args = [
        "similarity-sim",
        "--jobs",
        "8",
        "--variants",
        "gpu,gpu_ngpu",
        "--packing",
        "--out",
        str(tmp_path),
        "--json",
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in first["results"]] == [
        "similarity_gpu_cd_jp",
        "similarity_gpu_ngpu_cd_jp",
    ]
    assert main(args) == 0  # resumed from the stored runs
    assert json.loads(capsys.readouterr().out) == first
    assert main(["similarity-sim", "--cluster", "a100=2"]) == 2
    assert "a100" in capsys.readouterr().err
    with pytest.raises(InputError):
        similarity_workload(0, 5, gpus={"tpu": 1})
