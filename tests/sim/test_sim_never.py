"""A train time of ``NEVER`` marks a GPU type a job cannot use (Gavel's traces have such jobs: a
model with no K80 throughput). No task policy and no Algorithm 1 rule may start a task there, and
the task engine refuses a policy that does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.errors import HetschedError
from hetsched.hare.list_scheduling import MACHINE_RULES, schedule_in_order
from hetsched.hare.view import hare_view
from hetsched.instance.gavel_table import NEVER
from hetsched.instance.generators import random_instance
from hetsched.sim.engine import Policy, SimState, simulate
from hetsched.sim.policies.common import mean_task_time, take_runnable
from hetsched.sim.policies.srtf import Srtf
from hetsched.sim.registry import make_policy, names


def _forbidden(seed: int):
    """A random instance in which every other job cannot use the first GPU type."""
    inst = random_instance(seed, 6, 2, 8, rounds=(1, 3), tasks=(1, 3), gpus_per_server=3)
    banned = sorted({g.type for g in inst.gpus})[0]
    jobs = tuple(
        dataclasses.replace(j, train_time={**j.train_time, banned: NEVER}) if k % 2 == 0 else j
        for k, j in enumerate(inst.jobs)
    )
    return dataclasses.replace(inst, jobs=jobs), banned


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("policy", names("task"))
def test_no_task_policy_starts_a_task_where_the_job_cannot_run(policy, seed):
    inst, banned = _forbidden(seed)
    res = simulate(inst, make_policy(policy))
    assert res.validation.valid
    kind = {g.id: g.type for g in inst.gpus}
    jobs = {j.id: j for j in inst.jobs}
    for a in res.schedule.assignments:
        assert jobs[a.job].train_time[kind[a.gpu]] < NEVER, (policy, a)


def test_the_engine_refuses_a_task_on_a_gpu_its_job_cannot_use():
    inst, banned = _forbidden(0)
    bad_gpu = next(m for m, g in enumerate(inst.gpus) if g.type == banned)

    class Careless(Policy):
        name, clairvoyant = "careless", False

        def assign(self, state):
            n = next(iter(state.waiting_jobs()))
            free = state.idle_gpus
            m = bad_gpu if bad_gpu in free and not state.can_run(n, bad_gpu) else free[0]
            return [(n, m)]

    with pytest.raises(HetschedError, match="cannot run"):
        simulate(inst, Careless())


@pytest.mark.parametrize("rule", MACHINE_RULES)
def test_algorithm_1_takes_the_earliest_gpu_the_task_can_run_on(rule):
    """Both machine rules, compiled and interpreted, never pick a NEVER GPU; where no job has
    one, the earliest-available rule is unchanged (compared with the plain heap order)."""
    for seed in range(4):
        inst, _ = _forbidden(seed)
        view = hare_view(inst)
        order = np.lexsort((view.task_arrays[1], view.task_arrays[0]))
        n_of = view.task_arrays[0]
        for compiled in (True, False):
            start, gpu = schedule_in_order(view, order, rule, compiled=compiled)
            assert all(view.train[n_of[i], gpu[i]] < NEVER for i in range(len(gpu)))
        a = schedule_in_order(view, order, rule, compiled=True)
        b = schedule_in_order(view, order, rule, compiled=False)
        assert np.array_equal(a[1], b[1]) and np.allclose(a[0], b[0])


class _Watched:
    """A policy wrapped to count the decisions after which a GPU stays idle although a waiting
    job with a ready task could run there."""

    def __init__(self, inner):
        self.inner, self.name, self.clairvoyant = inner, inner.name, inner.clairvoyant
        self.idle_with_work = 0

    def prepare(self, instance, view):
        self.inner.prepare(instance, view)

    def assign(self, state):
        got = self.inner.assign(state)
        used = {m for _, m in got}
        given: dict[int, int] = {}
        for n, _ in got:
            given[n] = given.get(n, 0) + 1
        waiting = [n for n in state.waiting_jobs() if state.ready[n] > given.get(n, 0)]
        if any(state.can_run(n, m) for m in state.idle_gpus if m not in used for n in waiting):
            self.idle_with_work += 1
        return got


#: the task policies that fill every idle GPU some waiting job can use (the others hold GPUs on
#: purpose: Algorithm 1 follows its offline schedule, LAS-2D, Gavel-FIFO and AlloX place jobs
#: whole or by matching)
WORK_CONSERVING = ("fifo", "hlas", "hlas-p", "sched-homo", "srtf")


@pytest.mark.parametrize("policy", WORK_CONSERVING)
def test_work_conserving_policies_leave_no_gpu_idle_that_a_waiting_job_can_use(policy):
    """SRTF took the best jobs until their ready tasks covered the idle GPUs, then stopped, even
    where those jobs could not run on some of them (it left 50 GPUs idle over these 20 seeds)."""
    for seed in range(20):
        for inst in (
            _forbidden(seed)[0],
            random_instance(seed, 6, 2, 8, rounds=(1, 3), tasks=(1, 3), gpus_per_server=3),
        ):
            watched = _Watched(make_policy(policy))
            assert simulate(inst, watched).validation.valid
            assert watched.idle_with_work == 0, (policy, seed, inst.name)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2), picks=st.lists(st.integers(0, 11), max_size=12), k=st.integers(0, 5))
def test_take_runnable_is_the_first_k_gpus_the_job_can_use(seed, picks, k):
    """Jobs that run anywhere take the list's first k GPUs at once; others skip their NEVER
    GPUs: both as the plain filter."""
    inst, _ = _forbidden(seed)
    state = SimState(hare_view(inst), clairvoyant=False)
    free = sorted(set(m % state.view.n_gpus for m in picks))
    for n in range(state.view.n_jobs):
        times = state.task_times[n]
        expect = [m for m in free if times[m] < NEVER][:k]
        left = [m for m in free if m not in expect]
        mine = list(free)
        assert take_runnable(state, n, mine, k) == expect and mine == left
        assert state.runs_anywhere[n] == all(t < NEVER for t in times)


def test_srtf_task_time_is_each_jobs_mean_task_time():
    """SRTF's task times, worked out for every job at once (``mean_task_times``), are
    ``mean_task_time`` to the bit."""
    inst, _ = _forbidden(0)
    view = hare_view(inst)
    srtf = Srtf()
    srtf.prepare(inst, view)
    state = SimState(view, clairvoyant=True)
    assert srtf._task_time == [mean_task_time(state, n) for n in range(view.n_jobs)]
