"""Packing in the gang engine (issue 19, item 1): two jobs share a gang at Gavel's measured pair
rates, the survivor speeds up when its partner completes, the validator recomputes that and
refuses any other sharing, and packing runs are bounded by the packing relaxation."""

import random
from dataclasses import replace

import pytest
from test_sim_gang import cluster, job

from hetsched.core.errors import HetschedError
from hetsched.instance.gavel_table import load_throughputs
from hetsched.instance.model import Instance, ModelInfo
from hetsched.sim.bounds import workload_bounds
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_validate import Segment, validate_gang
from hetsched.sim.metrics import gang_metrics
from hetsched.sim.registry import make_policy
from hetsched.sim.run import run_policy

R50, TRF = "ResNet-50 (batch size 16)", "Transformer (batch size 128)"


def _modelled(jid, arrival, work, thr, model):
    return replace(job(jid, arrival, work, thr), model=ModelInfo(name=model) if model else None)


def _pair_instance(model_b=TRF, n_gpus=1, more=(), name="pair"):
    """A (ResNet-50, 100 units at 2/s) and B (200 at 1/s) at time 0, and ``more`` jobs."""
    return Instance(
        name,
        cluster({"v100": n_gpus}),
        (
            _modelled("A", 0.0, 100, {"v100": 2.0}, R50),
            _modelled("B", 0.0, 200, {"v100": 1.0}, model_b),
            *more,
        ),
    )


def _fractions():
    t = load_throughputs()
    a, b = t.pairs["v100"][(R50, 1)][(TRF, 1)]
    return a / t.isolated["v100"][(R50, 1)], b / t.isolated["v100"][(TRF, 1)]


def test_a_packed_pair_runs_at_the_measured_rates_and_the_survivor_speeds_up():
    """One V100. similarity:pack places A alone and packs B onto its GPU (Algorithm 3 packs even
    when the pair lowers the total). A runs at 2 f_A and completes at 100 / (2 f_A); B runs at
    f_B until then and at its own rate 1 after: C_B = C_A + (200 - f_B C_A)."""
    fa, fb = _fractions()
    result = simulate_gang(_pair_instance(), make_policy("similarity:pack"), 360.0, 10.0)
    ca = 100 / (2 * fa)
    assert result.completion == pytest.approx({"A": ca, "B": ca + (200 - fb * ca)})
    assert result.validation.completion == pytest.approx(result.completion)
    # without packing B waits for the next round
    alone = simulate_gang(_pair_instance(), make_policy("similarity"), 360.0, 10.0)
    assert alone.completion == pytest.approx({"A": 50.0, "B": 560.0})
    # a shared GPU is busy once
    assert gang_metrics(_pair_instance(), result)["utilization"] <= 1.0 + 1e-9


def test_the_validator_refuses_sharing_that_is_not_a_measured_pair():
    inst = _pair_instance(model_b=None)
    g = (inst.gpus[0].id,)
    segs = [Segment("A", 0.0, 100.0, g), Segment("B", 0.0, 100.0, g)]
    kinds = {v.kind for v in validate_gang(inst, segs, 10.0).violations}
    assert "overlap" in kinds


def test_the_validator_refuses_three_jobs_on_one_gpu_and_recomputes_pairs():
    fa, fb = _fractions()
    inst = _pair_instance(more=(_modelled("C", 0.0, 200, {"v100": 1.0}, TRF),), name="three")
    g = (inst.gpus[0].id,)
    ca = 100 / (2 * fa)
    three = [Segment("A", 0.0, ca, g), Segment("B", 0.0, 300.0, g), Segment("C", 0.0, 300.0, g)]
    assert any("three" in v.message for v in validate_gang(inst, three, 10.0).violations)
    # a pair claimed to finish at its solo rate is caught: progress is recomputed at f_A
    wrong = [Segment("A", 0.0, 50.0, g), Segment("B", 0.0, 250.0, g)]
    assert any(v.kind == "progress" for v in validate_gang(inst, wrong, 10.0).violations)


@pytest.mark.parametrize("seed", range(40))
def test_three_at_once_is_found_at_the_first_instant_three_segments_hold_the_gpu(seed):
    """Random segments of three jobs that may pair, on one GPU, with shared ends and starts: the
    validator reports three holders exactly when some instant lies inside three segments (a
    segment holds [start, end)), at the earliest such instant."""
    rng = random.Random(seed)
    inst = _pair_instance(more=(_modelled("C", 0.0, 200, {"v100": 1.0}, TRF),), name="three")
    g = (inst.gpus[0].id,)
    segs = []
    for jid in "ABC":
        t = float(rng.randint(0, 3))
        for _ in range(rng.randint(1, 3)):
            start, t = t, t + rng.randint(1, 4)
            segs.append(Segment(jid, start, float(t), g))
            t += rng.randint(0, 2)
    starts = sorted({s.start for s in segs})
    crowded = [t for t in starts if sum(s.start <= t < s.end for s in segs) > 2]
    found = [v.message for v in validate_gang(inst, segs, 10.0).violations if "three" in v.message]
    assert found == ([f"GPU {g[0]} held by three jobs at {crowded[0]}"] if crowded else [])


@pytest.mark.parametrize("late", [0.0, 1e8])
def test_a_short_shared_stretch_counts_however_late_the_run_ends(late):
    """B joins A's GPU 0.5 s before A completes. A runs at 2 until then and at its pair rate
    2 f_A after; B at f_B while A holds the GPU and at 1 after. A job Z that runs at ``late``
    stretches the run's horizon: the validator once took 1e-7 of the horizon as its slack (10 s
    here), missed the shared 0.5 s and moved A's completion to 50 without a violation (a
    100,000-job similarity:pack run then disagreed with the engine on a job's completion)."""
    fa, fb = _fractions()
    inst = _pair_instance(n_gpus=2, more=(_modelled("Z", late, 100, {"v100": 2.0}, None),))
    g0, g1 = (inst.gpus[0].id,), (inst.gpus[1].id,)
    joins = (100 - fa) / 2  # 2 joins + 2 f_A 0.5 = 100
    ends = joins + 0.5
    segs = [
        Segment("A", 0.0, ends, g0),
        Segment("B", joins, ends + 200 - 0.5 * fb, g0),
        Segment("Z", late, late + 50.0, g1),
    ]
    report = validate_gang(inst, segs, 10.0)
    assert report.valid, [v.message for v in report.violations]
    assert report.completion == pytest.approx(
        {"A": ends, "B": ends + 200 - 0.5 * fb, "Z": late + 50.0}, rel=1e-12
    )
    # A claimed to end at its solo time, 50, though B joined 0.5 s before: A falls short
    early = [Segment("A", 0.0, 50.0, g0), Segment("B", 49.5, 250.0 - 0.5 * fb, g0), segs[2]]
    found = [(v.kind, v.message[:2]) for v in validate_gang(inst, early, 10.0).violations]
    assert found == [("incomplete", "A ")]


class _ShareAll:
    """Puts every active job on GPU 0 (illegal unless it is a measured pair)."""

    name, clairvoyant = "share-all", False

    def prepare(self, instance, jobs):
        pass

    def allocate(self, state):
        return {j: (0,) for j in state.active()}


def test_the_engine_refuses_illegal_sharing_and_sharing_under_gavels_convention():
    with pytest.raises(HetschedError, match="two jobs"):
        simulate_gang(_pair_instance(model_b=None), _ShareAll(), 360.0, 10.0)
    with pytest.raises(HetschedError, match="two jobs"):
        simulate_gang(_pair_instance(), _ShareAll(), 360.0, 0.0, convention="gavel")
    ok = simulate_gang(_pair_instance(), _ShareAll(), 360.0, 10.0)
    assert ok.validation.valid


def test_packing_runs_are_bounded_by_the_packing_relaxation_which_is_weaker():
    inst = _pair_instance()
    s = run_policy(inst, "similarity:pack")
    assert s["packing"] is True
    packed = workload_bounds(inst, "job+packing")
    plain = workload_bounds(inst, "job")
    for k in ("avg_jct", "makespan", "weighted_completion"):
        assert getattr(packed, k) <= getattr(plain, k) * (1 + 1e-9)
        assert s["metrics"][k] >= getattr(packed, k) * (1 - 1e-9)


def test_the_validator_checks_resized_runs_against_the_workload_and_the_table():
    """A segment on another GPU count or row is legal only where ``metadata.gang.resize``
    allows it and the table measured it; its progress is at the resized rate."""
    import dataclasses

    from hetsched.sim.gang_validate import Segment, validate_gang
    from hetsched.similarity.workload import similarity_workload

    inst = similarity_workload(4, n_jobs=1, gpus={"v100": 4})
    job = inst.jobs[0]
    row, want = job.model.name, job.requested_workers
    data_rate = job.throughput["v100"]
    work = job.epochs
    from hetsched.sim.gang_model import gang_jobs

    d = gang_jobs(inst)
    other = next(n for r, n, x in d.resized_runs(0) if x == row and n != want)
    rate = d.run_rate(0, tuple(range(other)), None)
    assert rate > 0 and rate != data_rate
    ids = tuple(g.id for g in inst.gpus)[:other]
    run = [Segment(job.id, 0.0, work / rate, ids)]
    report = validate_gang(inst, run, 10.0)
    assert report.valid and report.completion[job.id] == pytest.approx(work / rate)
    fixed = dataclasses.replace(inst, metadata={**inst.metadata, "gang": {"resize": "none"}})
    assert any(v.kind == "gang" for v in validate_gang(fixed, run, 10.0).violations)
    unmeasured = [Segment(job.id, 0.0, work / rate, ids, "no such row (batch size 3)")]
    assert any(v.kind == "gang" for v in validate_gang(inst, unmeasured, 10.0).violations)


def test_a_packed_pair_that_runs_on_does_not_hand_its_gpu_to_both():
    """Both jobs of last round's packed pair ran on the same GPU; when each is decided again as it
    ran, only one may keep that GPU (this run once gave it to both, which the engine refused)."""
    from hetsched.sim.run import run_policy
    from hetsched.sim.workloads import gavel_poisson

    inst = gavel_poisson(2, n_jobs=40, rate_per_hour=60.0, per_type=4)
    for policy in ("similarity:pack", "similarity:keep-pack"):
        assert run_policy(inst, policy)["valid"]
