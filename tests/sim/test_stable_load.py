"""The stable-load variant of gavel-poisson: the fluid-capacity LP against hand-worked cases, the
workload spec, and the jobs-in-system measure that shows a backlog is bounded."""

from __future__ import annotations

import math

import pytest

from hetsched.core.errors import InputError
from hetsched.instance.model import Instance
from hetsched.sim.metrics import jobs_in_system
from hetsched.sim.stable_load import mean_log_uniform, saturation_rate
from hetsched.sim.workloads import STABLE_LOAD, capacity_per_hour, load_workload


def test_one_class_on_one_type_saturates_at_gpus_over_work():
    # 4 GPUs; a job holds 2 GPUs for 100 V100-seconds: 200 GPU-seconds a job, 4 / 200 jobs/s
    rate = saturation_rate([(1.0, 2, {"v100": 1.0})], {"v100": 4}, 100.0)
    assert rate == pytest.approx(4 / 200)


def test_a_slower_type_adds_capacity_at_its_speed():
    # on a k80 the job runs at half speed: 2 k80s serve like 1 v100
    rate = saturation_rate([(1.0, 1, {"v100": 2.0, "k80": 1.0})], {"v100": 1, "k80": 2}, 10.0)
    assert rate == pytest.approx((1 + 2 / 2) / 10)


def test_each_class_is_split_over_the_types_it_can_run_on():
    # class a runs only on v100 (no k80 throughput), class b anywhere; half the jobs each.
    # lambda/2 * 10 (a on v100) + z_b,v100 * 10 <= 1, z_b,k80 * 10 <= 1: b takes the k80 first
    classes = [(0.5, 1, {"v100": 1.0, "k80": 0.0}), (0.5, 1, {"v100": 1.0, "k80": 1.0})]
    rate = saturation_rate(classes, {"v100": 1, "k80": 1}, 10.0)
    assert rate == pytest.approx(0.2)  # a: 0.1/s on the v100, b: 0.1/s on the k80


def test_mean_of_a_log_uniform():
    assert mean_log_uniform(1.0, math.e) == pytest.approx(math.e - 1)


def test_the_stable_workload_arrives_at_its_share_of_the_capacity():
    cap = capacity_per_hour()
    assert 5 < cap < 20  # 7.96 jobs/h on 3 x 20 GPUs; the default's 20/h is over it
    inst = load_workload("gavel-poisson:stable", n_jobs=400)
    span_h = max(j.arrival for j in inst.jobs) / 3600
    assert 399 / span_h == pytest.approx(STABLE_LOAD * cap, rel=0.15)  # Poisson, 400 jobs
    assert (
        load_workload("gavel-poisson:0.4", n_jobs=50).jobs
        == load_workload("gavel-poisson:stable", n_jobs=50).jobs
    )


@pytest.mark.parametrize("spec", ["gavel-poisson:1.5", "gavel-poisson:0", "gavel-poisson:x"])
def test_a_load_outside_zero_one_is_bad_input(spec):
    with pytest.raises(InputError, match="LOAD"):
        load_workload(spec, n_jobs=10)


def test_jobs_in_system_counts_arrived_and_unfinished():
    inst = load_workload("gavel-poisson:stable", n_jobs=3)
    a = [j.arrival for j in inst.jobs]
    # all three overlap: the first finishes after the last arrives
    completion = {j.id: a[-1] + 1 + k for k, j in enumerate(inst.jobs)}
    mean, most = jobs_in_system(inst, completion)
    assert most == 3
    assert mean == pytest.approx((1 + 2 + 3 + 2 + 1 + 0) / 6)
    assert isinstance(inst, Instance)
