"""The job-level (gang) simulator: hand-computed runs with preemption and restore delays, the
independent validator rejecting each kind of broken run, every gang policy valid and
deterministic on every kind of workload, and policies that cheat are caught."""

import gc
import json

import pytest
from support import INSTANCES

from hetsched.core.errors import HetschedError, InputError
from hetsched.harmony.workload import harmony_workload
from hetsched.instance.io import load_instance
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_model import gang_jobs
from hetsched.sim.gang_validate import Segment, validate_gang
from hetsched.sim.metrics import gang_metrics
from hetsched.sim.registry import is_job_level, make_policy, names
from hetsched.sim.workloads import gavel_poisson, philly_window


def cluster(types: dict[str, int], per_server: int = 4) -> Cluster:
    gpus = [(t, i) for t, n in types.items() for i in range(n)]
    servers = tuple(
        Server(f"s{k}", tuple(Gpu(f"{t}{i}", t, f"s{k}") for t, i in gpus[j : j + per_server]))
        for k, j in enumerate(range(0, len(gpus), per_server))
    )
    return Cluster({t: GpuType(t) for t in types}, servers)


def job(jid: str, arrival: float, work: float, thr: dict[str, float], gang: int = 1) -> Job:
    return Job(
        jid,
        arrival,
        1.0,
        1,
        gang,
        {t: 1.0 for t in thr},
        {t: 0.0 for t in thr},
        requested_workers=gang,
        epochs=1.0,
        iterations_per_epoch=int(work),
        throughput=thr,
    )


def test_tiresias_preempts_and_the_resumed_job_pays_the_restore_delay():
    """One GPU, threshold 200 GPU-s, rounds of 360 s, restore 10 s. A (1000 units at 1/s) runs
    [0, 360) and is demoted; B arrives at 100, runs [360, 460) and completes; A resumes at 720
    (the GPU idles from 460: reallocation at boundaries), restores until 730 and finishes its
    640 remaining units at 1370."""
    inst = Instance(
        "pre",
        cluster({"a": 1}),
        (job("A", 0.0, 1000, {"a": 1.0}), job("B", 100.0, 100, {"a": 1.0})),
    )
    result = simulate_gang(inst, make_policy("tiresias:200"), round_seconds=360, restore_seconds=10)
    assert result.completion == pytest.approx({"A": 1370.0, "B": 460.0})
    assert result.validation.completion == pytest.approx(result.completion)
    assert result.preemptions == 1 and result.validation.restores == 1
    assert [(s.job, s.start, s.end) for s in result.segments] == [
        ("A", 0, 360),
        ("B", 360, 460),
        ("A", 720, 1370),
    ]
    yarn = simulate_gang(inst, make_policy("yarn-cs"), round_seconds=360, restore_seconds=10)
    assert yarn.completion == pytest.approx(
        {"A": 1000.0, "B": 1180.0}
    )  # non-preemptive: B waits for A
    assert yarn.preemptions == 0


def test_strict_yarn_cs_blocks_behind_the_head_of_the_queue():
    """Two GPUs. R (1 GPU) runs from 0 to 1000; W (2 GPUs) arrives next and cannot fit; S (1 GPU,
    100 s) arrives last. Backfilling starts S at the first boundary (360); strict FIFO makes S wait
    for W, which starts when R has finished (boundary 1080) and ends at 1580; S then starts at the
    next boundary (1800) and ends at 1900."""
    inst = Instance(
        "hol",
        cluster({"a": 2}),
        (
            job("R", 0.0, 1000, {"a": 1.0}),
            job("W", 10.0, 500, {"a": 1.0}, gang=2),
            job("S", 20.0, 100, {"a": 1.0}),
        ),
    )
    backfill = simulate_gang(inst, make_policy("yarn-cs"), round_seconds=360, restore_seconds=10)
    strict = simulate_gang(
        inst, make_policy("yarn-cs:strict"), round_seconds=360, restore_seconds=10
    )
    assert backfill.validation.valid and strict.validation.valid
    assert backfill.completion["S"] == pytest.approx(460.0)
    assert strict.completion == pytest.approx({"R": 1000.0, "W": 1580.0, "S": 1900.0})


def test_a_gang_on_mixed_types_runs_at_its_slowest_type():
    """Hadar's bottleneck (1b): a gang of 2 over a fast and a slow GPU progresses at the slow pace."""
    inst = Instance(
        "mix",
        cluster({"fast": 1, "slow": 1}),
        (job("J", 0.0, 100, {"fast": 4.0, "slow": 1.0}, gang=2),),
    )
    result = simulate_gang(inst, make_policy("yarn-cs"), round_seconds=360)
    assert result.completion == pytest.approx({"J": 100.0})
    assert gang_jobs(inst).alone_seconds(0) == pytest.approx(100.0)


def test_gavel_puts_a_lone_job_on_its_fastest_type_and_keeps_it():
    inst = Instance(
        "one",
        cluster({"k80": 2, "v100": 2}),
        (job("J", 0.0, 3000, {"k80": 1.0, "v100": 5.0}, gang=2),),
    )
    result = simulate_gang(inst, make_policy("gavel"), round_seconds=360)
    assert result.completion == pytest.approx({"J": 600.0})
    assert len(result.segments) == 1 and all(g.startswith("v100") for g in result.segments[0].gpus)


def test_hare_instances_map_to_gangs_of_rounds():
    """A Hare job without throughput data: W = rounds, X^r = 1 / (T^c_r + T^s_r) rounds/s."""
    inst = load_instance(INSTANCES / "paper" / "hare_fig5.json")
    data = gang_jobs(inst)
    j0 = inst.jobs[0]
    for r, t in enumerate(data.types):
        assert data.throughput[0, r] == pytest.approx(1.0 / (j0.train_time[t] + j0.sync_time[t]))
    assert data.work[0] == j0.rounds and data.gang[0] == j0.tasks_per_round


WORKLOADS = {
    "philly": lambda: philly_window(0, n_jobs=40, per_type=4),
    "poisson": lambda: gavel_poisson(1, n_jobs=30, rate_per_hour=40, per_type=8),
    "hlas_fig12": lambda: load_instance(INSTANCES / "paper" / "hlas_fig12.json"),
    "small-07": lambda: load_instance(INSTANCES / "small" / "small-07.json"),
    "hadar_fig1": lambda: load_instance(INSTANCES / "paper" / "hadar_fig1.json"),
}
POLICY_NAMES = [
    "yarn-cs",
    "yarn-cs:strict",
    "tiresias",
    "tiresias:60,600",
    "gavel",
    "gavel:max-min-fairness",
    "gavel:makespan",
    "gavel:min-total-duration",
    "gavel:max-throughput",
    "gavel:finish-time-fairness",
    "hadar",
    "hadar:dp",
    "harmony-greedy",
    "harmony:bin-packing",
    "harmony:exact",
]


@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_gang_policy_is_valid_deterministic_and_no_faster_than_alone(policy, workload):
    if policy == "hadar:dp" and workload in ("philly", "poisson"):
        pytest.skip(
            "the exact DP is exponential in the cluster state: bnb covers the large workloads"
        )
    inst = WORKLOADS[workload]()
    L = 360.0 if workload in ("philly", "poisson") else 1.0
    opts = {"node_limit": 300} if policy == "hadar" else {}
    data = gang_jobs(inst)
    if policy.startswith("gavel") and any((data.type_count() < s).all() for s in data.gang):
        with pytest.raises(InputError, match="one GPU type"):  # Gavel's gangs are single-type
            simulate_gang(inst, make_policy(policy), round_seconds=L, restore_seconds=0.0)
        return
    result = simulate_gang(
        inst, make_policy(policy, seed=3, **opts), round_seconds=L, restore_seconds=L / 36
    )
    assert result.validation.valid and set(result.completion) == {j.id for j in inst.jobs}
    for j, jid in enumerate(data.job_ids):  # no job beats its run alone on its fastest gang
        assert result.completion[jid] - data.arrival[j] >= data.alone_seconds(j) * (1 - 1e-9)
    m = gang_metrics(inst, result)
    assert 0 < m["utilization"] <= 1 + 1e-9 and m["avg_jct"] > 0
    again = simulate_gang(
        inst, make_policy(policy, seed=3, **opts), round_seconds=L, restore_seconds=L / 36
    )
    assert again.segments == result.segments


def test_the_validator_rejects_each_kind_of_broken_run():
    inst = Instance(
        "v", cluster({"a": 2}), (job("A", 0.0, 100, {"a": 1.0}), job("B", 50.0, 100, {"a": 2.0}))
    )
    good = [Segment("A", 0, 100, ("a0",)), Segment("B", 50, 100, ("a1",))]
    assert validate_gang(inst, good, 10.0).valid
    split = [
        Segment("A", 0, 40, ("a0",)),
        Segment("A", 40, 100, ("a0",)),
        Segment("B", 50, 100, ("a1",)),
    ]
    assert validate_gang(inst, split, 10.0).completion == pytest.approx(
        {"A": 100, "B": 100}
    )  # contiguous: no restore
    cases = {
        "overlap": [Segment("A", 0, 100, ("a0",)), Segment("B", 50, 100, ("a0",))],
        "arrival": [Segment("A", 0, 100, ("a0",)), Segment("B", 0, 50, ("a1",))],
        "gang": [Segment("A", 0, 100, ("a0", "a1")), Segment("B", 100, 150, ("a1",))],
        "progress": [
            Segment("A", 0, 120, ("a0",)),
            Segment("B", 50, 100, ("a1",)),
        ],  # holds GPUs after it is done
        "incomplete": [Segment("A", 0, 100, ("a0",)), Segment("B", 50, 90, ("a1",))],
        "unknown": [Segment("A", 0, 100, ("zz",)), Segment("B", 50, 100, ("a1",))],
        "bad_interval": [
            Segment("A", 100, 100, ("a0",)),
            Segment("A", 0, 100, ("a1",)),
            Segment("B", 50, 100, ("a0",)),
        ],
    }
    for kind, segs in cases.items():
        report = validate_gang(inst, segs, 10.0)
        assert not report.valid and kind in {v.kind for v in report.violations}, kind
    # a resumed job must pay the restore: without it, A's work ends at 100, with it at 110
    moved = [
        Segment("A", 0, 40, ("a0",)),
        Segment("A", 40, 100, ("a1",)),
        Segment("B", 100, 150, ("a0",)),
    ]
    report = validate_gang(inst, moved, 10.0)
    assert not report.valid and {v.kind for v in report.violations} == {"incomplete"}
    assert validate_gang(
        inst,
        [
            Segment("A", 0, 40, ("a0",)),
            Segment("A", 40, 110, ("a1",)),
            Segment("B", 110, 160, ("a0",)),
        ],
        10.0,
    ).completion["A"] == pytest.approx(110)


class _Cheat:
    clairvoyant = False

    def __init__(self, plan, name="cheat"):
        self.plan, self.name = plan, name

    def prepare(self, instance, jobs):
        pass

    def allocate(self, state):
        return self.plan(state)


def test_the_validator_leaves_the_garbage_collector_as_it_found_it():
    """It pauses the collector's automatic passes while it runs (gang_validate), and only then:
    enabled or disabled before, the same after, also when it refuses its input."""
    inst = Instance("v", cluster({"a": 1}), (job("A", 0.0, 100, {"a": 1.0}),))
    run = [Segment("A", 0, 100, ("a0",))]
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            gc.enable() if enabled else gc.disable()
            assert validate_gang(inst, run, 10.0).valid
            assert gc.isenabled() is enabled
            with pytest.raises(InputError):  # a Harmony workload needs the round length
                validate_gang(harmony_workload(0, n_jobs=2), [], 10.0)
            assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_policies_that_cheat_are_caught():
    inst = Instance(
        "c", cluster({"a": 2}), (job("A", 0.0, 100, {"a": 1.0}), job("B", 0.0, 100, {"a": 1.0}))
    )
    with pytest.raises(HetschedError, match="two jobs"):
        simulate_gang(inst, _Cheat(lambda s: {0: (0,), 1: (0,)}))
    with pytest.raises(HetschedError, match="gang"):
        simulate_gang(inst, _Cheat(lambda s: {0: (0, 1)}))
    with pytest.raises(HetschedError, match="non-clairvoyant"):
        simulate_gang(inst, _Cheat(lambda s: {0: (0,)} if s.remaining(0) else {}))
    late = Instance(
        "l", cluster({"a": 1}), (job("A", 0.0, 100, {"a": 1.0}), job("B", 5000.0, 100, {"a": 1.0}))
    )
    with pytest.raises(HetschedError, match="not active"):  # B has not arrived
        simulate_gang(late, _Cheat(lambda s: {1: (0,)}))


def test_bad_engine_options_and_unknown_policy_arguments_are_input_errors():
    inst = Instance("o", cluster({"a": 1}), (job("A", 0.0, 100, {"a": 1.0}),))
    with pytest.raises(InputError, match="restore_seconds"):
        simulate_gang(inst, make_policy("yarn-cs"), round_seconds=10, restore_seconds=10)
    for bad in ("gavel:nope", "tiresias:5,2", "tiresias:x", "hadar:lp", "harmony:lp"):
        with pytest.raises(InputError):
            make_policy(bad)
    with pytest.raises(HetschedError):
        make_policy("yarn-cs:1")  # only 'backfill' or 'strict'
    assert is_job_level("gavel:makespan") and not is_job_level("gavel-fifo")
    assert set(names("job")) == {
        "gavel",
        "hadar",
        "harmony",
        "harmony-greedy",
        "similarity",
        "tiresias",
        "yarn-cs",
    }
    big = Instance("b", cluster({"a": 1}), (job("A", 0.0, 100, {"a": 1.0}, gang=2),))
    with pytest.raises(InputError, match="requested_workers"):
        gang_jobs(big)


@pytest.mark.parametrize(
    "path, field",
    [
        ("allocation/gavel_two_jobs.json", r"\$\.jobs\[1\]\.throughput\.k80"),
        ("hadar/hadar_tiny.json", r"\$\.jobs\[1\]\.throughput\.k80"),
    ],
)
def test_a_speed_whose_run_takes_past_the_time_limit_is_an_input_error(path, field):
    """A throughput of 1e-300 (0 says the job cannot run there) gave a run of 1e300 s: the
    simulator never ended, Hadar overflowed its integer slots."""
    d = json.loads((INSTANCES / path).read_text())
    d["jobs"][1]["throughput"]["k80"] = 1e-300
    from hetsched.instance.io import parse_instance

    inst = parse_instance(d, source=path)
    with pytest.raises(InputError, match=field + ": the job's work .* takes .* past the 1e\\+15 s"):
        gang_jobs(inst)


def test_simulate_and_compare_cli_with_gang_policies(tmp_path, capsys):
    from hetsched.cli import main

    fig = str(INSTANCES / "paper" / "hadar_fig1.json")
    assert (
        main(
            [
                "simulate",
                fig,
                "--policy",
                "hadar",
                "--round-seconds",
                "1",
                "--restore-seconds",
                "0",
                "--json",
            ]
        )
        == 0
    )
    s = json.loads(capsys.readouterr().out)
    assert (
        s["level"] == "job"
        and s["valid"]
        and {"avg_jct", "weighted_jct", "makespan", "ftf", "utilization", "queueing_delay"}
        <= set(s["metrics"])
    )
    d = tmp_path / "cmp"
    args = [
        "compare",
        fig,
        "--policies",
        "yarn-cs,tiresias:1,5,gavel:makespan",
        "--out",
        str(d),
        "--quiet",
        "--round-seconds",
        "1",
        "--restore-seconds",
        "0.1",
    ]
    assert main(args) == 0
    assert {
        "yarn-cs-jobs.csv",
        "tiresias_1-5-jobs.csv",
        "gavel_makespan-jobs.csv",
        "runs.jsonl",
        "jct_cdf.png",
    } <= {p.name for p in d.iterdir()}
    before = (d / "runs.jsonl").read_text()
    assert len(before.splitlines()) == 3
    assert main(args) == 0  # resumed: nothing recomputed
    assert (d / "runs.jsonl").read_text() == before
    assert main(args[:-1] + ["0.2"]) == 0  # another restore delay is another experiment
    runs = [json.loads(x) for x in (d / "runs.jsonl").read_text().splitlines()]
    assert [r["restore_seconds"] for r in runs] == [0.1] * 3 + [0.2] * 3


def test_a_task_level_instance_with_more_tasks_than_gpus_is_not_a_gang_workload():
    with pytest.raises(InputError, match="requested_workers"):
        gang_jobs(load_instance(INSTANCES / "paper" / "hare_fig9.json"))


def test_a_policy_that_idles_forever_is_caught():
    inst = Instance("i", cluster({"a": 1}), (job("A", 0.0, 100, {"a": 1.0}),))
    with pytest.raises(HetschedError, match="idle"):
        simulate_gang(inst, _Cheat(lambda s: {}), round_seconds=1.0, restore_seconds=0.0)


def test_philly_windows_of_other_virtual_clusters():
    from hetsched.sim.workloads import load_workload

    default = load_workload("philly", n_jobs=60)
    assert {j.requested_workers for j in default.jobs} == {
        1
    }  # the largest VC's busy window: 1-GPU jobs only
    other = load_workload("philly-static:0e4a51", n_jobs=60)
    assert (
        all(j.arrival == 0 for j in other.jobs) and max(j.requested_workers for j in other.jobs) > 1
    )
    with pytest.raises(InputError, match="VC nope"):
        load_workload("philly:nope")


def test_gavel_solves_its_lp_once_per_round_and_only_when_the_active_set_changed():
    """Issue 41, item 1: under the hetsched convention Gavel's allocation LP is solved at a round
    boundary, at most once, and only when the set of active jobs differs from the last solve's
    (a job that arrives mid-round waits for the boundary, as every job does)."""
    policy = make_policy("gavel")
    sets: list[tuple[int, ...]] = []
    allocate = policy.allocate

    def recording(state):
        sets.append(tuple(state.active()))
        return allocate(state)

    policy.allocate = recording
    inst = gavel_poisson(2, n_jobs=60)
    run = simulate_gang(inst, policy, record_events=False)
    assert run.validation.valid and len(sets) == run.rounds
    changes = sum(1 for k, s in enumerate(sets) if k == 0 or s != sets[k - 1])
    assert 1 < changes < len(sets)  # the set changed in some rounds and not in others
    assert policy.lp_solves == changes
