"""Proven lower bounds beside every comparison (issue 19, item 2): no validated run of any policy,
in either engine or convention, beats them (property test over small random workloads); they
equal the optimum where it is known in closed form; each LP is at least its closed-form bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sim_gang import cluster, job

from hetsched.instance.generators import random_instance
from hetsched.instance.model import Instance
from hetsched.sim.bounds import (
    BOUNDED,
    gang_bound_jobs,
    lower_bounds,
    task_bound_jobs,
    workload_bounds,
)
from hetsched.sim.registry import names
from hetsched.sim.run import run_policy
from hetsched.sim.workloads import gavel_poisson
from hetsched.similarity.workload import similarity_workload

GANG = (
    "yarn-cs",
    "yarn-cs:strict",
    "tiresias:600",
    "gavel",
    "gavel:makespan",
    "gavel:finish-time-fairness",
    "gavel:max-throughput",
    "hadar",
    "similarity",
    "similarity:keep",
    "similarity:pack",
    "similarity:keep-pack",
)
TASK = tuple(p for p in names("task") if p != "hare")  # hare solves an LP per run: checked below


def _check(
    instance: Instance, policy: str, convention: str = "auto", bounds: dict | None = None
) -> None:
    """The policy's run is valid and no metric beats the bound of its level; ``bounds``: the
    bounds of ``instance`` by level computed so far (each is computed once per instance)."""
    s = run_policy(instance, policy, convention=convention)
    assert s["valid"]
    level = s["level"] + ("+packing" if s.get("packing") else "")
    bounds = {} if bounds is None else bounds
    if level not in bounds:
        bounds[level] = workload_bounds(instance, level)
    bound = bounds[level]
    for k in BOUNDED:
        assert s["metrics"][k] >= getattr(bound, k) * (1 - 1e-9), (policy, k, bound.method)


@given(seed=st.integers(0, 10_000), n=st.integers(1, 14))
def test_no_gang_run_beats_the_bounds(seed, n):
    """8 GPUs per type (Gavel runs a gang on one type, and gangs go up to 8), jobs every minute."""
    inst = gavel_poisson(seed, n_jobs=n, rate_per_hour=60.0, per_type=8)
    bounds: dict = {}
    for p in GANG:
        _check(inst, p, bounds=bounds)
    _check(inst, "gavel", convention="gavel", bounds=bounds)


RESIZING = ("similarity:gpu_ngpu", "similarity:pack-gpu_ngpu_bs", "similarity:keep-gpu_ngpu_bs")


@settings(max_examples=8, deadline=None)  # six policies a run
@given(seed=st.integers(0, 10_000), n=st.integers(1, 10), span=st.sampled_from([0, 7]))
def test_no_resized_run_beats_the_bounds(seed, n, span):
    """Jobs that may run on another GPU count or batch size (``metadata.gang.resize``): the
    relaxation takes each job's best run per GPU-second and its fastest run (alone or packed)."""
    inst = similarity_workload(seed, n_jobs=n, arrival_span_minutes=span, median_minutes=5)
    bounds: dict = {}
    for p in ("similarity", "yarn-cs", *RESIZING):
        _check(inst, p, bounds=bounds)


@given(seed=st.integers(0, 10_000), n=st.integers(1, 8), servers=st.integers(3, 4))
def test_no_run_on_harmonys_workload_beats_the_bounds(seed, n, servers):
    """Harmony's speed model only slows a job below its standalone speed, so the gang bounds
    at standalone speed hold for every policy there, Harmony's methods and the others (three
    servers or more: on fewer, a job of three CTC workers and three parameter servers fits no
    server's CPU, and no policy can run it)."""
    from hetsched.harmony.workload import harmony_workload

    inst = harmony_workload(seed, n_jobs=n, n_servers=servers, arrivals="poisson")
    for p in ("harmony:load-balancing", "harmony:greedy", "yarn-cs", "tiresias:600"):
        s = run_policy(inst, p, round_seconds=1200.0)
        assert s["valid"]
        bound = workload_bounds(inst, "job")
        for k in BOUNDED:
            assert s["metrics"][k] >= getattr(bound, k) * (1 - 1e-9), (p, k, bound.method)


@given(seed=st.integers(0, 10_000), n=st.integers(1, 5), gpus=st.integers(1, 4))
def test_no_task_run_beats_the_bounds(seed, n, gpus):
    inst = random_instance(seed, gpus, min(2, gpus), n, rounds=(1, 3), tasks=(1, 2))
    bounds: dict = {}
    for p in TASK:
        _check(inst, p, bounds=bounds)
    if gpus >= 2:  # the gang engine reads Hare's fields too (a round's tasks form the gang)
        for p in ("yarn-cs", "tiresias:50"):
            _check(inst, p, bounds=bounds)


def test_hare_offline_does_not_beat_the_task_bound():
    inst = random_instance(3, 3, 2, 4, rounds=(1, 3), tasks=(1, 2))
    _check(inst, "hare")


def test_bounds_equal_the_optimum_when_every_job_has_its_own_gpu():
    """n jobs arriving at 0, n GPUs of one type: each job alone on a GPU from 0 is optimal, so the
    optimum avg JCT is the mean of the W_j / X_j and the makespan their maximum; the bounds
    reach both and YARN-CS (which does exactly that) meets them."""
    work = [300.0, 1000.0, 50.0]
    inst = Instance(
        "own",
        cluster({"v100": 3}),
        tuple(job(f"J{i}", 0.0, w, {"v100": 2.0}) for i, w in enumerate(work)),
    )
    b = workload_bounds(inst, "job")
    assert b.avg_jct == pytest.approx(np.mean(work) / 2, rel=1e-9)
    assert b.makespan == pytest.approx(max(work) / 2, rel=1e-9)
    s = run_policy(inst, "yarn-cs")
    assert s["metrics"]["avg_jct"] == pytest.approx(b.avg_jct, rel=1e-5)
    assert s["metrics"]["makespan"] == pytest.approx(b.makespan, rel=1e-5)


def test_the_lps_improve_on_the_closed_forms_under_load():
    """Ten equal jobs on one GPU: alone, each takes 100 s, so the closed form says avg JCT >= 100;
    the optimum (shortest first, all equal) is 550. The interval LP must find much more than the
    closed form, and the release-date LP the full makespan 1000."""
    inst = Instance(
        "queue",
        cluster({"v100": 1}),
        tuple(job(f"J{i}", 0.0, 100.0, {"v100": 1.0}) for i in range(10)),
    )
    b = workload_bounds(inst, "job")
    assert b.method["avg_jct"] == "interval-lp" and b.method["makespan"] == "release-lp"
    assert 400 <= b.avg_jct <= 550
    assert b.makespan == pytest.approx(1000, rel=1e-5)


def test_task_and_gang_data_agree_on_a_gang_instance():
    """A Gavel workload carries both models; one task per round and no sync make them the same."""
    inst = gavel_poisson(4, n_jobs=6, per_type=2)
    g, t = gang_bound_jobs(inst), task_bound_jobs(inst)
    assert np.allclose(g.alone, t.alone) and np.allclose(g.arrival, t.arrival)
    bg, bt = lower_bounds(g), lower_bounds(t)
    assert bg.makespan == pytest.approx(bt.makespan, rel=1e-4)
