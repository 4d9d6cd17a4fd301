"""The simulator: every policy's run validated, the TCC paper's toy examples reproduced exactly,
Hare's offline plan executed as planned, determinism, and policies that cheat are caught."""

import json

import numpy as np
import pytest
from support import INSTANCES, MANIFEST

from hetsched.core.errors import HetschedError
from hetsched.instance.io import dump_instance, load_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.sim.engine import SimState, simulate
from hetsched.sim.gang_policies.gavel import SIM_POLICIES
from hetsched.sim.metrics import metrics
from hetsched.sim.registry import make_policy, names
from hetsched.sim.workloads import gavel_poisson, philly_rows, philly_split, philly_window

FIG12 = INSTANCES / "paper" / "hlas_fig12.json"


@pytest.mark.parametrize("policy", sorted(names("task")))
@pytest.mark.parametrize(
    "name", ["hare_fig5.json", "hare_fig9.json", "small-03.json", "small-07.json", "small-19.json"]
)
def test_every_policy_is_valid_and_no_better_than_the_optimum(policy, name):
    path = (INSTANCES / "paper" / name) if name.startswith("hare") else (INSTANCES / "small" / name)
    inst = load_instance(path)
    result = simulate(inst, make_policy(policy))
    assert result.validation.valid and set(result.completion) == {j.id for j in inst.jobs}
    assert result.validation.objective >= MANIFEST[name]["optimum"] - 1e-6  # a heuristic is >= OPT
    again = simulate(inst, make_policy(policy))
    assert again.schedule == result.schedule  # deterministic


@pytest.mark.parametrize("policy", ["fifo", "hlas", "srtf", "allox"])
def test_the_schedule_columns_number_rounds_and_tasks_as_the_start_events_do(policy):
    """The engine records only job, GPU and start per task and numbers rounds and tasks from the
    order of a job's starts; the start events name them as the engine saw them."""
    inst = gavel_poisson(3, n_jobs=40)
    run = simulate(inst, make_policy(policy))
    started = [(j, r, k, g, t) for t, kind, j, r, k, g in run.events if kind == "start"]
    rows = [(a.job, a.round, a.task, a.gpu, a.start) for a in run.schedule.assignments]
    assert rows == started and len(rows) == inst.n_tasks


def test_fig12_average_jcts():
    """TCC Fig. 12: 20/3 under HLAS, 16/3 with full knowledge (SRTF), 17/3 with J3 >= 3 rounds (HLAS-P)."""
    inst = load_instance(FIG12)
    avg = {
        p: metrics(inst, simulate(inst, make_policy(p)))["avg_jct"]
        for p in ("hlas", "srtf", "hlas-p")
    }
    assert avg == pytest.approx({"hlas": 20 / 3, "srtf": 16 / 3, "hlas-p": 17 / 3})
    assert simulate(inst, make_policy("hlas")).completion == {"J1": 4.0, "J2": 7.0, "J3": 9.0}
    assert simulate(inst, make_policy("hlas-p")).completion == {"J1": 3.0, "J2": 5.0, "J3": 9.0}


@pytest.mark.parametrize(
    "gpus,job,service",
    [((0, 1), "J_B", 8.0), ((0, 1), "J_A", 12.0), ((2, 3), "J_B", 9.0), ((2, 3), "J_A", 7.2)],
)
def test_fig9_10_attained_service(gpus, job, service):
    """TCC Figs. 9-10: one round's task-GPU time on GPUs 1-2 (B 8, A 12) and on GPUs 3-4 (B 9, A 7.2)."""
    times = {"J_A": (3, 3, 1.8, 1.8), "J_B": (1, 2, 2.5, 1)}
    tasks = {"J_A": 4, "J_B": 6}
    ids = [f"g{m + 1}" for m in gpus]
    cluster = Cluster(
        {g: GpuType(g) for g in ids}, (Server("s", tuple(Gpu(g, g, "s") for g in ids)),)
    )
    inst = Instance(
        "fig9",
        cluster,
        (
            Job(
                job,
                0.0,
                1.0,
                1,
                tasks[job],
                {g: float(times[job][m]) for g, m in zip(ids, gpus)},
                {g: 0.0 for g in ids},
            ),
        ),
    )
    result = simulate(inst, make_policy("fifo"))
    used = sum(inst.jobs[0].train_time[a.gpu] for a in result.schedule.assignments)
    assert used == pytest.approx(service)


def test_hare_offline_executes_algorithm_1_exactly():
    from hetsched.hare.heuristic import run_heuristic

    inst = load_instance(INSTANCES / "small" / "small-07.json")
    planned = run_heuristic(inst, order="hare-interval-lp")
    simulated = simulate(inst, make_policy("hare"))
    key = lambda a: (a.job, a.round, a.gpu, a.start)  # noqa: E731 - task indices inside a round are interchangeable
    assert sorted(map(key, simulated.schedule.assignments)) == sorted(
        map(key, planned.solution.assignments)
    )
    assert simulated.validation.objective == pytest.approx(planned.objective)


def test_non_clairvoyant_policies_cannot_see_job_sizes():
    class Peek:
        name, clairvoyant = "peek", False

        def prepare(self, instance, view):
            pass

        def assign(self, state: SimState):
            state.total_rounds(state.waiting_jobs()[0])
            return []

    with pytest.raises(HetschedError, match="non-clairvoyant"):
        simulate(load_instance(FIG12), Peek())


def test_a_policy_that_double_books_a_gpu_is_caught():
    class Greedy:
        name, clairvoyant = "greedy", False

        def prepare(self, instance, view):
            pass

        def assign(self, state: SimState):
            return [(n, 0) for n in state.waiting_jobs()]  # everyone on GPU 0

    with pytest.raises(HetschedError, match="busy GPU"):
        simulate(load_instance(FIG12), Greedy())


def test_a_policy_that_idles_forever_is_caught():
    class Lazy:
        name, clairvoyant = "lazy", False

        def prepare(self, instance, view):
            pass

        def assign(self, state):
            return []

    with pytest.raises(HetschedError, match="unfinished"):
        simulate(load_instance(FIG12), Lazy())


def test_workloads_are_seeded_and_documented_shapes():
    rows = philly_rows()
    split = philly_split(rows)
    assert (
        set(split) <= {1, 2, 4, 8} and split[1] > 0.8 and sum(split.values()) == pytest.approx(1.0)
    )
    w = philly_window(0, n_jobs=60)
    assert len(w.jobs) == 60 and len(w.gpus) == 60 and w == philly_window(0, n_jobs=60)
    assert min(j.arrival for j in w.jobs) == 0.0 and all(j.rounds <= 50 for j in w.jobs)
    g = gavel_poisson(3, n_jobs=40)
    assert g == gavel_poisson(3, n_jobs=40) and g != gavel_poisson(4, n_jobs=40)
    r = simulate(g, make_policy("fifo"))
    assert r.validation.valid and np.isfinite(metrics(g, r)["avg_jct"])


def test_simulate_and_compare_cli(tmp_path, capsys):
    from hetsched.cli import main

    assert main(["simulate", str(FIG12), "--policy", "hlas", "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["policy"] == "hlas" and out["seed"] == 0 and out["valid"]
    assert set(out["metrics"]) >= {
        "avg_jct",
        "weighted_jct",
        "makespan",
        "ftf",
        "utilization",
        "queueing_delay",
    }
    assert out["metrics"]["avg_jct"] == pytest.approx(20 / 3)
    assert (tmp_path / "hlas-jobs.csv").read_text().splitlines()[0].startswith("job,arrival")
    d = tmp_path / "cmp"
    assert main(["compare", str(FIG12), "--policies", "hlas,srtf", "--out", str(d), "--quiet"]) == 0
    table = capsys.readouterr().out
    assert "hlas" in table and "srtf" in table and (d / "jct_cdf.png").exists()
    first = (d / "runs.jsonl").read_text()
    assert (
        main(["compare", str(FIG12), "--policies", "hlas,srtf,fifo", "--out", str(d), "--quiet"])
        == 0
    )
    runs = (d / "runs.jsonl").read_text()  # resumed, not rerun: hlas and srtf kept, fifo added
    assert runs.startswith(first) and [json.loads(x)["policy"] for x in runs.splitlines()] == [
        "hlas",
        "srtf",
        "fifo",
    ]
    saved = json.loads((d / "compare.json").read_text())
    assert len(saved["policies"]) == 3
    for r in saved["policies"]:
        bound = saved["bounds"][r["lower_bound"]]
        for k, ratio in r["ratio_to_bound"].items():
            assert ratio >= 1.0 and r["metrics"][k] >= bound[k]


def test_bench_sim_quick(tmp_path, capsys):
    from hetsched.cli import main

    assert main(["bench", "sim", "--quick", "--json", "--out", str(tmp_path / "sim.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["policy"] for r in out["philly_window"]} == set(names("task"))
    parts = ("philly_window", "large", "philly_window_gang", "large_gang")
    assert all(r["valid"] and r["jobs_per_second"] > 0 for part in parts for r in out[part])
    assert {r["policy"] for r in out["large_gang"]} == {
        "yarn-cs",
        "tiresias",
        "harmony-greedy",
        "similarity",
        "similarity:pack",
        "gavel",
        "gavel:makespan",
    }
    assert all(r["same_completions"] and r["engine_to_minimal"] > 0 for r in out["event_rate"])
    scaled = {r["policy"] for r in out["scaling"]}
    assert scaled >= {"hlas", "hlas-p", "tiresias", "harmony-greedy", "similarity", "gavel"}
    assert "similarity:pack" in scaled
    stable = out["stable_scaling"]
    assert {r["policy"] for r in stable} >= scaled  # every policy, on the stable load too
    assert "hadar" in {r["policy"] for r in stable}  # and Hadar's, whose queue stays short there
    gavel = {f"gavel:{name}" for name in SIM_POLICIES if name != "max-min-fairness-perf"}
    assert {r["policy"] for r in stable} >= gavel  # and every allocation policy of Gavel's
    for r in stable:
        assert r["valid"] and r["workload"] == "gavel-poisson:stable"
        assert list(r["cpu_seconds"]) == ["100", "200"]
        yardstick = next(y for y in stable if y["policy"] == "yarn-cs")["cpu_seconds"]
        for n, ratio in r["per_yardstick"].items():  # the same process's yarn-cs, as a unit
            assert ratio == pytest.approx(r["cpu_seconds"][n] / yardstick[n], abs=1e-3)
        assert all(0 < b["mean"] <= b["max"] <= 200 for b in r["jobs_in_system"].values())


@pytest.mark.parametrize(
    "make",
    [
        lambda: philly_window(0, n_jobs=120),
        lambda: philly_window(0, n_jobs=120, static=True),
        lambda: gavel_poisson(3, n_jobs=80),
    ],
)
def test_generated_workloads_save_and_load_back_unchanged(make, tmp_path):
    """Issue 21's bug: a generated workload's instance file must load back (whole iterations)."""
    inst = make()
    dump_instance(inst, tmp_path / "w.json")
    assert load_instance(tmp_path / "w.json") == inst


def test_compare_keeps_a_run_per_seed(tmp_path):
    """The run store's key has the seed: another seed is another run, the same seed is resumed."""
    from hetsched.sim.run import compare

    inst = load_instance(FIG12)
    for seed in (0, 1, 0):
        compare(inst, ["hlas"], seed=seed, out=tmp_path)
    runs = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [(r["policy"], r["seed"]) for r in runs] == [("hlas", 0), ("hlas", 1)]
