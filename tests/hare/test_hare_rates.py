"""The rate region of a job's rounds (hetsched.hare.rates): configurations, their least lengths
against the view's round length L_n (an independent greedy), facets that hold every rate point
and every real schedule, and cut off what lies outside."""

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.optimize import linprog

from hetsched.hare.rates import config_durations, rate_facets, rate_points, round_configs
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.hare.view import hare_view
from hetsched.schedule.validate import validate
from hetsched.testing.strategies import hare_instances


@pytest.mark.parametrize("tasks,classes", [(1, 1), (4, 1), (1, 3), (8, 4), (5, 3)])
def test_round_configs_are_every_split_once(tasks, classes):
    configs = round_configs(tasks, classes)
    assert len(configs) == comb(tasks + classes - 1, classes - 1)
    assert (configs.sum(axis=1) == tasks).all() and (configs >= 0).all()
    assert len({tuple(k) for k in configs}) == len(configs)


def _job_region(view, n):
    classes = view.gpu_classes()
    first = [c[0] for c in classes]
    sizes = np.array([len(c) for c in classes], dtype=float)
    return classes, sizes, view.train[n, first], view.sync[n, first]


@settings(max_examples=60, deadline=None)
@given(hare_instances(max_gpus=5, max_types=3, max_tasks_per_round=4, max_tasks=12))
def test_the_shortest_configuration_is_the_round_length(inst):
    """min_k d(k) over all splits is L_n, which the view computes by a greedy over per-GPU loads."""
    view = hare_view(inst)
    for n in range(view.n_jobs):
        _, sizes, train, sync = _job_region(view, n)
        configs = round_configs(int(view.tasks_per_round[n]), len(sizes))
        shortest = config_durations(configs, sizes, train, sync).min()
        assert shortest == pytest.approx(view.round_length[n], rel=1e-12)


def test_facets_hold_every_rate_point_tightly_and_measure_points_as_the_region_does():
    sizes, train, sync = (
        np.array([2.0, 2, 2, 2]),
        np.array([0.51, 1.26, 2.02, 1.68]),
        np.full(4, 0.14),
    )
    points = rate_points(8, sizes, train, sync)
    facets = rate_facets(8, sizes, train, sync)
    assert facets is not None and len(facets) > 1 and (facets >= 0).all()
    values = points @ facets.T
    assert values.max() <= 1 + 1e-12
    assert np.allclose(values.max(axis=0), 1.0)  # each facet touches a rate point
    rng = np.random.default_rng(0)
    for _ in range(200):  # a convex combination, shrunk toward 0: inside
        mix = rng.dirichlet(np.ones(len(points))) @ points * rng.uniform(0, 1)
        assert (facets @ mix).max() <= 1 + 1e-12
    # the facets measure any x >= 0 as the region does: max_alpha alpha . x is the least lambda
    # with x <= sum_k mu_k r_k, sum mu = lambda, mu >= 0 (an LP over the rate points)
    for _ in range(50):
        x = rng.exponential(size=4) * rng.integers(0, 2, size=4)
        lp = linprog(
            np.ones(len(points)), A_ub=-points.T, b_ub=-x, bounds=(0, None), method="highs"
        )
        assert (facets @ x).max() == pytest.approx(lp.fun, rel=1e-9, abs=1e-12)


def test_one_class_is_one_bound_and_a_huge_region_is_left_out():
    one = rate_facets(3, np.array([2.0]), np.array([1.0]), np.array([0.5]))
    assert one is not None and one[0, 0] == pytest.approx(2.5 / 3)  # 2 tasks/GPU: 2.5 s for 3
    assert rate_facets(40, np.ones(12), np.ones(12), np.zeros(12)) is None


@settings(max_examples=40, deadline=None)
@given(hare_instances(max_gpus=5, max_types=3, max_tasks_per_round=4, max_tasks=14))
def test_every_schedule_trains_within_its_active_time_times_the_rate_region(inst):
    """alpha . (tasks per class) <= C_n - a_n for every job of a feasible schedule."""
    view = hare_view(inst)
    _, schedule = quick_upper_bound(inst, view)
    report = validate(inst, schedule)
    assert report.valid
    classes = view.gpu_classes()
    class_of = np.empty(view.n_gpus, dtype=np.int64)
    for c, members in enumerate(classes):
        class_of[members] = c
    gpu_index = {g: m for m, g in enumerate(view.gpu_ids)}
    job_index = {j: n for n, j in enumerate(view.job_ids)}
    jobs = np.array([job_index[schedule.job_ids[j]] for j in schedule.job])
    gpus = np.array([gpu_index[schedule.gpu_ids[g]] for g in schedule.gpu])
    for n in range(view.n_jobs):
        counts = np.bincount(class_of[gpus[jobs == n]], minlength=len(classes))
        facets = rate_facets(int(view.tasks_per_round[n]), *_job_region(view, n)[1:])
        if facets is None:
            continue
        active = report.completion[view.job_ids[n]] - view.arrival[n]
        assert (facets @ counts).max() <= active * (1 + 1e-9) + 1e-9
