"""The serial schedule generation for Hare_Sched (hetsched.hare.serial): every job order gives
a schedule the independent validator accepts with no tolerance, the first job of the order gets
its schedule alone on the cluster, gaps are used, and the job-order search is seeded and never
worse than the orders it starts from."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import CERTIFIED, MANIFEST, instance_path

from hetsched.hare.list_scheduling import arrays_objective, completion_times, schedule_arrays
from hetsched.hare.serial import serial_schedule, serial_search, smith_order
from hetsched.hare.view import hare_view
from hetsched.instance.generators import generate
from hetsched.instance.io import load_instance, parse_instance
from hetsched.schedule.validate import validate

TOL = 1e-6


def _valid(inst, view, start, gpu):
    report = validate(inst, schedule_arrays(view, start, gpu))
    assert report.valid, report.violations[:3]
    assert report.objective == pytest.approx(arrays_objective(view, start, gpu), abs=TOL)
    return report.objective


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    jobs=st.integers(1, 6),
    gpus=st.integers(1, 5),
    data=st.data(),
)
def test_every_job_order_gives_a_valid_schedule(seed, jobs, gpus, data):
    inst = generate("hare-random", seed=seed, n_jobs=jobs, n_gpus=gpus)
    view = hare_view(inst)
    order = np.array(data.draw(st.permutations(range(view.n_jobs))), dtype=np.int64)
    start, gpu = serial_schedule(view, order)
    _valid(inst, view, start, gpu)


def _serial_by_the_definition(view, order):
    """The serial scheme written plainly: every task on the GPU where it finishes first (lowest
    index among ties), at the earliest start in that GPU's gaps; no pruning."""
    busy = [[] for _ in range(view.n_gpus)]  # sorted (lo, hi) per GPU
    start, gpu = np.empty(view.n_tasks), np.empty(view.n_tasks, dtype=np.int64)
    for n in order:
        ready = view.arrival[n]
        for r in range(view.rounds[n]):
            end = ready
            for k in range(view.tasks_per_round[n]):
                best = None
                for g in range(view.n_gpus):
                    x = ready
                    for lo, hi in busy[g]:
                        if hi <= x:
                            continue
                        if x + view.train[n, g] <= lo:
                            break
                        x = hi
                    if best is None or x + view.cycle[n, g] < best[0]:
                        best = (x + view.cycle[n, g], x, g)
                f, x, g = best
                busy[g] = sorted(busy[g] + [(x, x + view.train[n, g])])
                task = view.task_offset[n] + r * view.tasks_per_round[n] + k
                start[task], gpu[task] = x, g
                end = max(end, f)
            ready = end
    return start, gpu


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), jobs=st.integers(1, 7), gpus=st.integers(1, 6))
def test_the_compiled_scheme_is_the_definition(seed, jobs, gpus):
    """The kernel skips GPUs (and stops scans) that cannot finish first: same schedule, to the
    bit, as the plain scheme on every GPU."""
    inst = generate("hare-random", seed=seed, n_jobs=jobs, n_gpus=gpus)
    view = hare_view(inst)
    order = np.random.default_rng(seed).permutation(view.n_jobs)
    start, gpu = serial_schedule(view, order)
    want_start, want_gpu = _serial_by_the_definition(view, order)
    assert np.array_equal(start, want_start) and np.array_equal(gpu, want_gpu)


@pytest.mark.parametrize("seed", range(6))
def test_the_first_job_gets_its_schedule_alone(seed):
    """Round after round of length L_n from a_n: C_n = a_n + |R_n| L_n, the per-job bound."""
    inst = generate("hare-random", seed=seed, n_jobs=5, n_gpus=4)
    view = hare_view(inst)
    for first in range(view.n_jobs):
        order = np.array([first] + [n for n in range(view.n_jobs) if n != first])
        start, gpu = serial_schedule(view, order)
        done = completion_times(view, start, gpu)
        assert done[first] == pytest.approx(view.completion_lower_bounds()[first], rel=1e-9)


def test_a_later_job_trains_in_a_gap_an_earlier_one_left():
    """Two jobs, one GPU: the first (arriving at 10) is placed first; the second (arriving at 0,
    two seconds of training) runs before it, in the gap the serial scheme keeps open."""
    one = {"v100": 1.0}
    inst = parse_instance(
        {
            "format": "hetsched.instance/1",
            "name": "gap",
            "cluster": {
                "gpu_types": {"v100": {}},
                "servers": [{"id": "s", "gpus": [{"id": "g", "type": "v100"}]}],
            },
            "jobs": [
                {"id": "late", "arrival": 10.0, "weight": 1.0, "rounds": 1, "tasks_per_round": 1,
                 "train_time": one, "sync_time": {"v100": 0.0}},
                {"id": "early", "arrival": 0.0, "weight": 1.0, "rounds": 1, "tasks_per_round": 1,
                 "train_time": {"v100": 2.0}, "sync_time": {"v100": 0.0}},
            ],
        }
    )  # fmt: skip
    view = hare_view(inst)
    start, gpu = serial_schedule(view, np.array([0, 1]))
    assert _valid(inst, view, start, gpu) == pytest.approx(11.0 + 2.0)
    assert start.tolist() == [10.0, 0.0]


@pytest.mark.parametrize("name", [n for n in CERTIFIED if MANIFEST[n]["tasks"] <= 12][:8])
def test_serial_schedules_are_never_below_the_proven_optimum(name):
    inst = load_instance(instance_path(name))
    view = hare_view(inst)
    run = serial_search(view, [smith_order(view)], 0, 50)
    assert _valid(inst, view, run.start, run.gpu) >= MANIFEST[name]["optimum"] - TOL


@pytest.mark.parametrize("seed", range(3))
def test_the_search_is_seeded_and_no_worse_than_its_start(seed):
    inst = generate("hare-table2", seed=seed, n_jobs=8, n_gpus=8)
    view = hare_view(inst)
    orders = [smith_order(view), np.argsort(view.arrival, kind="stable")]
    starts = [arrays_objective(view, *serial_schedule(view, o)) for o in orders]
    one = serial_search(view, orders, seed=seed, evaluations=300)
    two = serial_search(view, orders, seed=seed, evaluations=300)
    assert one.objective <= min(starts) + TOL
    assert one.objective == two.objective and np.array_equal(one.order, two.order)
    assert np.array_equal(one.start, two.start) and np.array_equal(one.gpu, two.gpu)
    _valid(inst, view, one.start, one.gpu)


def test_a_job_order_that_is_not_a_permutation_is_refused():
    view = hare_view(generate("hare-random", seed=0, n_jobs=3, n_gpus=2))
    with pytest.raises(ValueError, match="permutation"):
        serial_schedule(view, np.array([0, 0, 1]))
