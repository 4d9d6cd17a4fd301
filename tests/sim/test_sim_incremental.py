"""The simulators' incremental structures decide exactly as the plain ones they replace:
HLAS-P re-keys only the jobs whose prediction may move (against re-keying every waiting job of
the model), HLAS and HLAS-P keep a job's heap entry while its key stays (against popping and
pushing the job at every placement, with entries that go stale at every change), Tiresias reads a heap of (queue, arrival rank) (against sorting every active job each
round), the task engine's backlog is a sorted list (against the minimal event loop), AlloX
takes its candidates from heaps per GPU class (against weighing every waiting job), Harmony
reads the waiting jobs in one pass per round (against listing them again for every chunk), and
the similarity policy's packing keeps its queue by kind and each kind's pair once (against
scanning every active job and pricing every pair each round)."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetsched.bench.event_loop import minimal_fifo
from hetsched.hare.view import hare_view
from hetsched.instance.gavel_table import NEVER
from hetsched.sim import engine
from hetsched.sim.engine import simulate
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_policies.common import place_in_order
from hetsched.sim.gang_policies.harmony import Harmony
from hetsched.sim.gang_policies.similarity import Similarity, _solo_jobs
from hetsched.sim.gang_policies.tiresias import Tiresias
from hetsched.sim.policies import srtf
from hetsched.sim.policies.allox import CANDIDATES, AlloX
from hetsched.sim.policies.heaps import LazyHeap
from hetsched.sim.policies.hlas_p import HlasP
from hetsched.sim.policies.las import Hlas
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import gavel_poisson, load_workload


class RekeyEveryone(HlasP):
    """HLAS-P as first written: every completion re-keys every waiting job of its model."""

    def _learn_and_rekey(self, state):
        for family in self._learn(state):
            for jobs in self._members[family].values():
                for n in jobs:
                    if state.ready[n] > 0:
                        key = self._key(state, n, int(state.rank[n]), state.started[n] > 0)
                        self._heap.rekey(state, key, n)


class PopAndPush:
    """HLAS's Algorithm 1 as first written: a heap whose entries go stale whenever their job
    changes, the top job popped for each idle GPU and pushed back while partly placed."""

    def prepare(self, instance, view):
        super().prepare(instance, view)
        self._heap = LazyHeap()

    def assign(self, state):
        self._setup(state)
        self._learn_and_rekey(state)
        self._heap.refresh(
            state, lambda n: self._key(state, n, state.rank[n], state.started[n] > 0)
        )
        ready, out, times = {}, [], state.task_times
        for m in state.idle_gpus:
            top, passed = self._heap.pop(state), []
            while top is not None and (ready.get(top[1], 1) == 0 or times[top[1]][m] >= NEVER):
                if ready.get(top[1], 1):
                    passed.append(top)
                top = self._heap.pop(state)
            for k, p in passed:
                self._heap.push(state, k, p)
            if top is None:
                continue
            n = top[1]
            ready.setdefault(n, state.ready[n])
            out.append((n, m))
            ready[n] -= 1
            if ready[n] > 0:
                self._heap.push(state, self._key(state, n, state.rank[n], True), n)
        return out


class PopAndPushHlas(PopAndPush, Hlas):
    pass


class PopAndPushHlasP(PopAndPush, HlasP):
    pass


class WeighEveryone(AlloX):
    """AlloX as first written: each decision weighs every waiting job on every idle GPU (on one
    idle GPU: the least p_{n,m}, ties by arrival, by a scan of the backlog)."""

    def _first_on(self, state, m):
        jobs = list(state.waiting_jobs())
        work = [(self._left(state, n) * float(state.view.train[n, m]), state.rank[n]) for n in jobs]
        return jobs[min(range(len(jobs)), key=work.__getitem__)] if jobs else None

    def _least_work(self, state, gpus, k):
        jobs = list(state.waiting_jobs())
        work = [self._left(state, n) * float(state.view.train[n, gpus].min()) for n in jobs]
        return [jobs[i] for i in sorted(np.argsort(work, kind="stable")[:k])]


class SortEveryRound(Tiresias):
    """Tiresias as first written: every active job sorted by queue each round."""

    def allocate(self, state):
        order = sorted(state.active(), key=lambda j: self.queue(state, j))
        return place_in_order(state, order, self.server_rank)


def _hints(inst, seed: int) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    return {j.id: int(rng.integers(0, 3 * j.rounds + 1)) for j in inst.jobs if rng.random() < 0.6}


def _assignments(result):
    return [(a.job, a.round, a.task, a.gpu, a.start) for a in result.schedule.assignments]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("history", [True, False])
@pytest.mark.parametrize("hinted", [True, False])
def test_hlas_p_decides_as_re_keying_every_waiting_job(seed, history, hinted):
    inst = gavel_poisson(seed=seed, n_jobs=300, rate_per_hour=40.0, per_type=4)
    hints = _hints(inst, seed) if hinted else {}
    fast = simulate(inst, HlasP(min_rounds=hints, history=history), record_events=False)
    plain = simulate(inst, RekeyEveryone(min_rounds=hints, history=history), record_events=False)
    assert _assignments(fast) == _assignments(plain)
    assert fast.completion == plain.completion


def _banned(inst, seed: int):
    """``inst`` with a third of its jobs unable to use one GPU type (train time ``NEVER``)."""
    rng = np.random.default_rng(seed)
    kinds = sorted({g.type for g in inst.gpus})
    jobs = tuple(
        dataclasses.replace(j, train_time={**j.train_time, kinds[seed % len(kinds)]: NEVER})
        if rng.random() < 1 / 3
        else j
        for j in inst.jobs
    )
    return dataclasses.replace(inst, jobs=jobs)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("policy", ["hlas", "hlas-p", "hlas:2"])
@pytest.mark.parametrize("never", [False, True])
def test_hlas_keeps_entries_and_decides_as_popping_and_pushing(seed, policy, never):
    inst = gavel_poisson(seed=seed, n_jobs=300, rate_per_hour=40.0, per_type=4)
    if never:
        inst = _banned(inst, seed)
    name, _, groups = policy.partition(":")
    plain = (PopAndPushHlasP if name == "hlas-p" else PopAndPushHlas)(
        **({"groups": int(groups)} if groups else {})
    )
    fast = simulate(inst, make_policy(policy), record_events=False)
    plain = simulate(inst, plain, record_events=False)
    assert fast.validation.valid
    assert _assignments(fast) == _assignments(plain)
    assert fast.completion == plain.completion


class RescanEveryChunk(Harmony):
    """Harmony as first written: the waiting jobs listed, then filtered again for every chunk."""

    def _chunks(self, state, free):
        d = self.data
        waiting = [j for j in state.active() if j not in state.held]
        while waiting and any(free):
            n_free = sum(len(f) for f in free)
            chunk = [j for j in waiting if d.gang[j] <= n_free]
            if self.method != "exact":
                chunk = chunk[:n_free]
            if not chunk:
                return
            yield chunk
            tried = set(chunk)
            waiting = [j for j in waiting if j not in tried]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("method", ["greedy", "tetris", "exact"])
def test_harmony_decides_as_rescanning_the_waiting_jobs(seed, method):
    inst = gavel_poisson(seed=seed, n_jobs=120 if method == "exact" else 300, per_type=4)
    fast = simulate_gang(inst, make_policy(f"harmony:{method}"), 360.0, 10.0)
    plain = simulate_gang(inst, RescanEveryChunk(method), 360.0, 10.0)
    assert fast.validation.valid
    assert fast.segments == plain.segments
    assert fast.completion == plain.completion


class PriceEveryPair(Similarity):
    """The similarity policy's packing as first written: every active job scanned, every
    (solo, queued) pair priced, Algorithm 3 pair by pair."""

    def _pack(self, state, plan):
        from hetsched.sim.gang_model import Run
        from hetsched.similarity.packing.problem import PackingView

        d = self.data
        gpus_of, row_of, solo = _solo_jobs(plan)
        if not solo:
            return set()
        seen, queue = {}, []
        for j in state.active():
            if j in plan or (d.gang[j] != 1 and d.resize == "none"):
                continue
            kind = (d.models[j], d.memory_gb[j], tuple(d.throughput[j] > 0), int(d.gang[j]))
            if seen.get(kind, 0) < len(solo):
                seen[kind] = seen.get(kind, 0) + 1
                queue.append(j)
        if not queue:
            return set()
        gain = np.full((len(solo), len(queue)), np.nan)
        own = np.full_like(gain, np.nan)
        for a, s in enumerate(solo):
            r, row = d.type_of[gpus_of[s][0]], row_of.get(s)
            for b, q in enumerate(queue):
                solo_q = d.resize_fraction(q, r, 1)
                if d.throughput[q, r] <= 0 or solo_q <= 0:
                    continue
                mine = d.pair_fraction(s, q, r, 1, (row, None)) / d.resize_fraction(s, r, 1, row)
                theirs = d.pair_fraction(q, s, r, 1, (None, row)) / solo_q
                if mine > 0 and theirs > 0:
                    own[a, b], gain[a, b] = mine, mine + theirs - 1.0
        view = PackingView(d.job_ids, tuple(solo), (), tuple(queue), gain, own)
        taken, packed = set(), set()
        for a, s in enumerate(solo):  # Algorithm 3, line 6, pair by pair
            best = None
            for b in range(len(queue)):
                if b in taken or np.isnan(gain[a, b]):
                    continue
                if best is None or (own[a, b], gain[a, b]) > best[0]:
                    best = ((own[a, b], gain[a, b]), b)
            if best is not None:
                taken.add(best[1])
                q = queue[best[1]]
                plan[q] = gpus_of[s] if d.gang[q] == 1 else Run(gpus_of[s])
                packed.add(q)
        assert view.queue == tuple(queue)
        return packed


@pytest.mark.parametrize(
    "workload,mode",
    [
        ("gavel-poisson", "pack"),
        ("gavel-poisson", "keep-pack"),
        ("similarity-jobs", "gpu_ngpu-pack"),
        ("similarity-jobs", "gpu_ngpu_bs-keep-pack"),
    ],
)
@pytest.mark.parametrize("scan_limit", [0.0, 1e9])
def test_similarity_packs_as_pricing_every_pair(workload, mode, scan_limit):
    """Both ways the policy finds its pairs (each kind's jobs read lazily, or the waiting jobs
    listed by kind: ``scan_limit`` forces one) decide as pricing every pair."""
    if workload == "gavel-poisson":
        inst = gavel_poisson(seed=1, n_jobs=60, rate_per_hour=60.0, per_type=8)
    else:
        inst = load_workload(workload, 0)
    policy = make_policy(f"similarity:{mode}")
    policy.scan_limit = scan_limit
    fast = simulate_gang(inst, policy, 360.0, 10.0)
    plain = simulate_gang(inst, PriceEveryPair(mode), 360.0, 10.0)
    assert fast.validation.valid
    assert fast.segments == plain.segments
    assert fast.completion == plain.completion


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("thresholds", ["3600", "600,3600,14400"])
def test_tiresias_decides_as_sorting_every_active_job(seed, thresholds):
    inst = gavel_poisson(seed=seed, n_jobs=250, rate_per_hour=40.0, per_type=4)
    fast = simulate_gang(inst, make_policy(f"tiresias:{thresholds}"), 360.0, 10.0)
    plain = simulate_gang(inst, SortEveryRound(thresholds), 360.0, 10.0)
    assert fast.segments == plain.segments
    assert fast.completion == plain.completion


@pytest.mark.parametrize("seed", range(2))
def test_the_task_engine_backlog_keeps_fifo_completions(seed):
    inst = gavel_poisson(seed=seed, n_jobs=400, rate_per_hour=60.0, per_type=3)  # a long backlog
    view = hare_view(inst)
    base, _ = minimal_fifo(view)
    run = simulate(inst, make_policy("fifo"), record_events=False)
    assert [run.completion[j] for j in view.job_ids] == pytest.approx(base, rel=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_srtf_sorting_a_short_queue_decides_as_its_heap(monkeypatch, seed):
    """SRTF sorts the waiting jobs when they are few and reads its heap past ``SHORT_QUEUE``: on
    a backlog that crosses it both ways, the schedule is the heap's alone and the sort's alone."""
    inst = gavel_poisson(seed=seed, n_jobs=300, rate_per_hour=60.0, per_type=3)
    runs = []
    for short in (-1, srtf.SHORT_QUEUE, 10**9):  # heap only, both, sort only
        monkeypatch.setattr(srtf, "SHORT_QUEUE", short)
        runs.append(simulate(inst, make_policy("srtf"), record_events=False).schedule.assignments)
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.parametrize("short", [3, 4096])
def test_the_backlog_list_and_sorted_list_keep_fifo_completions(monkeypatch, short):
    """The engine's waiting jobs move from a plain list to a sorted list past ``SHORT`` jobs: a
    threshold of 3 crosses it at once on a long backlog."""
    monkeypatch.setattr(engine, "SHORT", short)
    inst = gavel_poisson(seed=0, n_jobs=300, rate_per_hour=60.0, per_type=3)
    view = hare_view(inst)
    base, _ = minimal_fifo(view)
    run = simulate(inst, make_policy("fifo"), record_events=False)
    assert [run.completion[j] for j in view.job_ids] == pytest.approx(base, rel=1e-12)


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 39)), max_size=200))
def test_waiting_reads_its_jobs_in_arrival_order_across_the_switch(ops):
    """Adds and removes of arrival ranks, past a threshold of 5: the sequence is always the jobs
    of the ranks held, in rank order (a sorted set is the reference)."""
    rank = [(7 * n) % 40 for n in range(40)]  # job n arrives (7 n mod 40)-th
    waiting, held = engine.Waiting(rank), set()
    old, engine.SHORT = engine.SHORT, 5
    try:
        for add, r in ops:
            if add and r not in held:
                waiting.add(r)
                held.add(r)
            elif not add and r in held:
                waiting.remove(r)
                held.discard(r)
            expect = [rank.index(x) for x in sorted(held)]
            assert list(waiting) == expect and len(waiting) == len(expect)
            assert waiting[:2] == expect[:2]
    finally:
        engine.SHORT = old


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("per_gpu", [False, True])
def test_allox_decides_as_weighing_every_waiting_job(seed, per_gpu):
    """A long backlog (the candidates are a strict subset) on one class per type, and on one
    class per GPU (per-GPU task times differ)."""
    import dataclasses

    inst = gavel_poisson(seed, n_jobs=300, rate_per_hour=120.0)
    if per_gpu:  # every GPU its own column: a per-GPU train time 1-5% off its type's
        gpus = [g.id for g in inst.gpus]
        jobs = tuple(
            dataclasses.replace(
                j,
                train_time_per_gpu={
                    g: j.train_time[t] * (1 + 0.01 * (k % 5))
                    for k, (g, t) in enumerate((g.id, g.type) for g in inst.gpus)
                },
            )
            for j in inst.jobs
        )
        inst = dataclasses.replace(inst, jobs=jobs)
        assert len(gpus) > CANDIDATES
    fast = simulate(inst, AlloX(), record_events=False)
    slow = simulate(inst, WeighEveryone(), record_events=False)
    assert fast.schedule.assignments == slow.schedule.assignments


class KeyFromDefinitions(HlasP):
    """HLAS-P with its key built from :meth:`predicted`, :meth:`size` and :meth:`queue_of` (the
    readable definitions), checked at every key against the inline one the policy uses."""

    checked = 0

    def _key(self, state, n, position, partial):
        fast = super()._key(state, n, position, partial)
        rp = self.predicted(state, n)
        head = 4 * self.queue_of(self.size(state, n, rp)) + 2 * (not partial)
        assert fast == ((head, -rp, position) if rp > 0 else (head + 1, 0, position))
        KeyFromDefinitions.checked += 1
        return fast


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("hinted", [True, False])
def test_hlas_p_inline_key_is_its_definitions(seed, hinted):
    inst = gavel_poisson(seed=seed, n_jobs=200, rate_per_hour=40.0, per_type=4)
    hints = _hints(inst, seed) if hinted else {}
    KeyFromDefinitions.checked = 0
    run = simulate(inst, KeyFromDefinitions(min_rounds=hints), record_events=False)
    assert run.validation.valid and KeyFromDefinitions.checked > inst.n_tasks // 2


def _fill_fastest_by_min(state, order, free=None):
    """fill_fastest as first written: a pass over the idle GPUs for each task."""
    free = state.idle_gpus if free is None else list(free)
    every, out = state.task_times, []
    for n in order:
        left, times = state.ready[n], every[n]
        while left and free:
            m = min(free, key=times.__getitem__)
            if times[m] >= NEVER:
                break
            free.remove(m)
            out.append((n, m))
            left -= 1
        if not free:
            break
    return out


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("policy", ["fifo", "srtf", "gavel-fifo"])
@pytest.mark.parametrize("never", [False, True])
def test_fill_fastest_reads_each_jobs_gpu_order_as_a_pass_over_the_idle_ones(
    monkeypatch, seed, policy, never
):
    """fill_fastest reads a job's GPUs sorted by time (SimState.fastest_first) instead of taking
    the least of the idle GPUs for each task: the same starts, under a light and a long queue
    (SRTF's one-job and one-GPU short paths and its heap; fill_fastest's own one-GPU path, the
    long queue's usual instant), with jobs that cannot use a type."""
    from hetsched.sim.policies import fifo

    for rate in (20.0, 60.0):
        inst = gavel_poisson(seed=seed, n_jobs=300, rate_per_hour=rate, per_type=3)
        if never:
            inst = _banned(inst, seed)
        fast = simulate(inst, make_policy(policy), record_events=False)
        with monkeypatch.context() as patch:
            patch.setattr(fifo, "fill_fastest", _fill_fastest_by_min)
            patch.setattr(srtf, "fill_fastest", _fill_fastest_by_min)
            plain = simulate(inst, make_policy(policy), record_events=False)
        assert fast.schedule.assignments == plain.schedule.assignments
        assert fast.completion == plain.completion


@pytest.mark.parametrize("seed", range(2))
def test_gavel_fifo_waits_for_the_gpus_a_job_can_run_on_not_for_the_cluster(seed):
    """A round with more tasks than the GPUs its job can run on starts once those are idle (it
    used to wait for as many GPUs as the cluster has: the head job then blocked the queue for
    good, and the engine stopped with jobs unfinished)."""
    inst = _banned(gavel_poisson(seed=seed, n_jobs=300, rate_per_hour=20.0, per_type=3), seed)
    view = hare_view(inst)
    usable = (view.train < NEVER).sum(axis=1)
    assert (view.tasks_per_round > usable).any()  # the case occurs
    run = simulate(inst, make_policy("gavel-fifo"), record_events=False)
    assert run.validation.valid and len(run.completion) == view.n_jobs


class _NoShortPath:
    """A policy that sees one more waiting job than there is, so that its short path for a lone
    waiting job is never taken (the full loop then decides for it; the extra count changes
    nothing else in these policies' loops)."""

    def __init__(self, inner):
        self.inner, self.name, self.clairvoyant = inner, inner.name, inner.clairvoyant

    def prepare(self, instance, view):
        self.inner.prepare(instance, view)

    def assign(self, state):
        state.n_waiting += 1
        try:
            return self.inner.assign(state)
        finally:
            state.n_waiting -= 1


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("policy", ["hlas", "hlas-p", "las2d", "srtf"])
@pytest.mark.parametrize("never", [False, True])
def test_a_lone_waiting_job_is_placed_as_the_full_loop_places_it(seed, policy, never):
    for rate in (8.0, 40.0):  # mostly one job waiting; a queue
        inst = gavel_poisson(seed=seed, n_jobs=300, rate_per_hour=rate, per_type=3)
        if never:
            inst = _banned(inst, seed)
        fast = simulate(inst, make_policy(policy), record_events=False)
        full = simulate(inst, _NoShortPath(make_policy(policy)), record_events=False)
        assert fast.schedule.assignments == full.schedule.assignments
        assert fast.completion == full.completion
