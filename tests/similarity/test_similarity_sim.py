"""The AppSci'24 model-similarity policy on its evaluation's workload, in the one gang simulator
(``similarity-sim`` is a shortcut for ``compare``): hand-checkable runs, the retired engine's
results reproduced, determinism, the exact rounds, the command line."""

from __future__ import annotations

import json

import pytest

from hetsched.cli import main
from hetsched.cli.similarity import policy_name
from hetsched.core.errors import HetschedError, InputError
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy
from hetsched.sim.run import run_policy
from hetsched.sim.workloads import load_workload
from hetsched.similarity.reference import gavel_reference_db, parse_row
from hetsched.similarity.workload import similarity_workload

ROW = "ResNet-18 (batch size 64)"


def _one_job(gpus: int, want: int, seconds: float, resize: str = "count-batch") -> Instance:
    """One job of ``ROW`` asking for ``want`` V100s, ``seconds`` of work at that count."""
    thr = gavel_reference_db().get(ROW).throughput
    job = Job(
        "J0",
        0.0,
        1.0,
        1,
        want,
        {"v100": 1.0},
        {"v100": 0.0},
        requested_workers=want,
        epochs=thr[("v100", want)] * seconds,
        iterations_per_epoch=1,
        throughput={"v100": thr[("v100", want)]},
        memory_gb=4.0,
        model=ModelInfo(name=ROW),
    )
    server = Server("v100", tuple(Gpu(f"v100-{i}", "v100", "v100") for i in range(gpus)))
    return Instance(
        "one",
        Cluster({"v100": GpuType("v100", memory_gb=16.0)}, (server,)),
        (job,),
        metadata={"gang": {"resize": resize}},
    )


def test_one_job_alone_runs_at_its_true_rate():
    """One job, one V100: it trains at the table's rate from time 0 and finishes mid-round."""
    res = run_policy(_one_job(1, 1, 500.0), "similarity:gpu_ngpu", round_seconds=180)
    assert res["valid"]
    assert res["metrics"]["makespan"] == pytest.approx(500.0)
    assert res["metrics"]["utilization"] == pytest.approx(1.0)


def test_a_resized_job_runs_at_the_tables_rate_for_its_new_count():
    """A job that asks for 2 V100s on a cluster of 1 cannot run as asked; ``gpu_ngpu`` runs it
    on 1 GPU, where the table's iterations/s at 1 GPU over those at 2 set its pace."""
    thr = gavel_reference_db().get(ROW).throughput
    inst = _one_job(1, 2, 500.0)
    res = run_policy(inst, "similarity:gpu_ngpu", round_seconds=180)
    expected = 500.0 * thr[("v100", 2)] / thr[("v100", 1)]
    assert res["valid"] and res["metrics"]["makespan"] == pytest.approx(expected)
    with pytest.raises(InputError, match="gpu_ngpu_bs"):  # the variant the workload forbids
        run_policy(_one_job(1, 1, 1.0, resize="count"), "similarity:gpu_ngpu_bs")


def test_the_engine_refuses_a_resized_run_the_workload_does_not_allow():
    """With ``resize: none`` a plan that runs a 2-GPU job on 1 GPU is an error, not a run."""

    class Shrink:
        name, clairvoyant = "shrink", False

        def prepare(self, instance, jobs):
            pass

        def allocate(self, state):
            return {0: (0,)}

    with pytest.raises(HetschedError, match="its gang is 2"):
        simulate_gang(_one_job(2, 2, 10.0, resize="none"), Shrink(), 180.0, 10.0)


# Recorded from the retired similarity-sim engine (commit b7bea5f, hetsched/similarity/workload.py)
# with its queue's arrival ties broken by job index, as the gang engine does (it broke them by
# the id's text, J10 before J2): (seed, jobs, arrival span) -> variant, cd -> (makespan, avg JCT).
RETIRED = {
    (2, 15, 7): {
        ("gpu", True): (7144.259467592954, 2885.407066535471),
        ("gpu_ngpu", True): (7885.070677437355, 3365.24653217664),
        ("gpu_ngpu_bs", True): (5408.96060133225, 2213.772455832492),
        ("gpu_ngpu", False): (20428.08896793419, 4607.112736591623),
        ("gpu_ngpu_bs", False): (6651.416473990336, 2594.0499781297062),
    },
    (0, 20, 0): {
        ("gpu", True): (9293.552114319076, 3021.5553755233814),
        ("gpu_ngpu", True): (7317.6611830992215, 3404.1818980018716),
        ("gpu_ngpu_bs", True): (5599.403735100195, 2586.1140745581606),
        ("gpu_ngpu", False): (22184.503721193916, 4274.563981006042),
        ("gpu_ngpu_bs", False): (20936.66738883901, 3691.7551170306942),
    },
}


@pytest.mark.parametrize("workload", sorted(RETIRED))
def test_the_gang_engine_reproduces_the_retired_engine_without_packing(workload):
    seed, n, span = workload
    inst = similarity_workload(seed, n_jobs=n, arrival_span_minutes=span)
    for (variant, cd), (makespan, avg) in RETIRED[workload].items():
        res = run_policy(inst, policy_name(variant, not cd, False, None), round_seconds=180)
        assert res["valid"]
        assert res["metrics"]["makespan"] == pytest.approx(makespan, rel=1e-9)
        assert res["metrics"]["avg_jct"] == pytest.approx(avg, rel=1e-9)


@pytest.mark.parametrize("variant", ["gpu", "gpu_ngpu", "gpu_ngpu_bs"])
def test_runs_with_packing_are_valid_and_deterministic(variant):
    inst = load_workload("similarity-jobs:7", seed=2, n_jobs=15)
    name = policy_name(variant, False, True, None)
    a = simulate_gang(inst, make_policy(name), 180.0, 10.0)
    b = simulate_gang(inst, make_policy(name), 180.0, 10.0)
    assert a.validation.valid and a.segments == b.segments
    assert any(s.row for s in a.segments) == (variant == "gpu_ngpu_bs")  # batch sizes change
    sizes = {len(s.gpus) for s in a.segments}
    asked = {j.requested_workers for j in inst.jobs}
    assert sizes <= asked or variant != "gpu"  # only the resizing variants change counts
    shared = {s.gpus for s in a.segments}
    assert len(shared) < len(a.segments)  # some segments share or reuse a GPU set


def test_rounds_that_change_decisions_shorten_the_makespan_here():
    """The paper's 'cd' effect (Fig. 6: about 29-33% shorter makespan) on a static workload;
    asserted only as a direction on this seeded instance, with the measured numbers in docs."""
    inst = similarity_workload(0, n_jobs=30)
    cd = run_policy(inst, "similarity:gpu_ngpu", round_seconds=180)["metrics"]["makespan"]
    kept = run_policy(inst, "similarity:keep-gpu_ngpu", round_seconds=180)["metrics"]["makespan"]
    assert cd < kept


def test_exact_rounds_use_the_solver_and_stay_valid():
    inst = similarity_workload(1, n_jobs=10)
    for mode in ("truth", "estimated"):
        res = run_policy(inst, f"similarity:pack-gpu_ngpu-{mode}", round_seconds=180)
        assert res["valid"] and res["policy"].endswith(mode)


def test_policy_tokens_are_checked():
    for bad in ("similarity:gpu-gpu_ngpu", "similarity:keep-keep", "similarity:fast"):
        with pytest.raises(InputError, match="TOKENS"):
            make_policy(bad)
    assert make_policy("similarity:keep-pack").name == "similarity:keep-pack"


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
        "similarity:pack-gpu",
        "similarity:pack-gpu_ngpu",
    ]
    assert all(min(r["ratio_to_bound"].values()) >= 1 - 1e-9 for r in first["results"])
    assert main(args) == 0  # resumed from the stored runs
    assert json.loads(capsys.readouterr().out) == first
    assert (tmp_path / "compare.json").exists()
    assert main(["similarity-sim", "--cluster", "a100=2"]) == 2
    assert "a100" in capsys.readouterr().err
    with pytest.raises(InputError):
        similarity_workload(0, 5, gpus={"tpu": 1})


def test_the_workload_saves_and_loads_back(tmp_path):
    from hetsched.instance.io import load_instance
    from hetsched.instance.model import instance_to_dict

    inst = similarity_workload(3, n_jobs=6, arrival_span_minutes=5)
    (tmp_path / "w.json").write_text(json.dumps(instance_to_dict(inst)))
    back = load_instance(tmp_path / "w.json")
    assert back.extensions.gang.resize == "count-batch"
    assert [j.epochs for j in back.jobs] == [j.epochs for j in inst.jobs]
    assert parse_row(back.jobs[0].model.name)[1] >= 1
