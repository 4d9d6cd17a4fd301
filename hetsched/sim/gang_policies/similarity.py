"""The AppSci'24 model-similarity policy (Secs. 4.1-4.3, Algorithms 1-3) as a gang-engine policy,
so that it runs beside Gavel, Tiresias, Hadar and YARN-CS on the same workloads (issue 19).

Before time 0 each job is matched to its most similar *other* model of Gavel's table (Algorithm
1: cosine similarity of layers, parameters and batch size; the job's own row is left out, as for
a new model). Every round the active jobs, in arrival order, each take their first option, ranked
by that reference's measured throughput, that fits the free GPUs (Algorithm 2, lines 6-13).

The policy is written ``similarity[:TOKENS]``, tokens joined by ``-``:

* ``keep``: a running job keeps its GPUs until it completes and the queue gets what is left
  (without it every decision is remade each round: the paper's "cd");
* ``pack``: then pack (Algorithm 3, :func:`hetsched.similarity.packing.greedy_packing`): each job placed
  alone on one GPU, in scheduling order, may take one waiting job onto its GPU, the one that
  keeps its own throughput highest (Gavel's measured pairs; the engine runs the pair at those
  rates, :mod:`hetsched.sim.gang_model`). A packed job is not kept: it is decided again;
* the variant, what a job's options are (Sec. 4.2): ``gpu`` (default: the GPU type, at the
  job's requested GPU count), ``gpu_ngpu`` (type and count) or ``gpu_ngpu_bs`` (type, count and
  batch size: the reference family's batch sizes). The last two need a workload that lets jobs
  run resized (``metadata.gang.resize``, :mod:`hetsched.sim.gang_model`);
* ``truth`` or ``estimated``: the exact round (``models/similarity_allocation.py``) and the
  exact packing instead of Algorithms 2 and 3, ranking options by the jobs' true throughputs (an
  oracle) or by the reference's, as the greedy does.

Jobs that run on as they ran (same type, count and row) keep their GPUs, so they pay no restore.
A job must name its row of Gavel's table (``model.name``); the workloads built from the Philly
trace, Gavel's traces, ``gavel-poisson`` and ``similarity-jobs`` do.
"""

from __future__ import annotations

from itertools import islice
from typing import Iterator

import numpy as np

from hetsched.core.errors import HetschedError, InputError
from hetsched.instance.model import Instance, Job, ModelInfo
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_model import Run
from hetsched.similarity.packing import optimal_packing
from hetsched.similarity.packing.problem import PackingView
from hetsched.similarity.reference import ReferenceJob, gavel_reference_db, row_features
from hetsched.similarity.round import VARIANTS, Option, check_round, greedy_round, round_view
from hetsched.similarity.workload import cluster_by_type

#: what each variant needs of the workload's ``metadata.gang.resize``
NEEDS = {"gpu": ("none", "count", "count-batch"), "gpu_ngpu": ("count", "count-batch")}
NEEDS["gpu_ngpu_bs"] = ("count-batch",)
EXACT = ("truth", "estimated")


#: :attr:`Similarity.scan_limit`'s default
SCAN_LIMIT = 1.0


class Similarity:
    clairvoyant = False

    TOKENS = ("keep", "pack", *VARIANTS, *EXACT)

    def __init__(self, mode: str = "", seed: int = 0):
        tokens = [] if mode in ("", "change") else mode.split("-")
        bad = [t for t in tokens if t not in self.TOKENS] + [
            t for t in set(tokens) if tokens.count(t) > 1
        ]
        chosen = [t for t in tokens if t in VARIANTS]
        exact = [t for t in tokens if t in EXACT]
        if bad or len(chosen) > 1 or len(exact) > 1:
            raise InputError(
                "policy",
                "similarity:TOKENS",
                f"tokens joined by '-' from {', '.join(self.TOKENS)}: at most one variant and "
                f"one of {', '.join(EXACT)}, each once (got {mode!r})",
            )
        self.keep, self.pack = "keep" in tokens, "pack" in tokens
        self.variant = chosen[0] if chosen else "gpu"
        self.exact = exact[0] if exact else None
        self.name = "similarity" + (f":{'-'.join(tokens)}" if tokens else "")
        self.packed: set[int] = set()  # jobs packed onto another's GPU last round
        # Algorithm 3 lists the waiting jobs by kind when the active jobs are at most this many
        # times the kinds (a short queue); past that it reads each kind's jobs lazily. Both
        # give the same pairs (tests/sim/test_sim_similarity_gang.py); this only picks the faster
        self.scan_limit = SCAN_LIMIT

    def prepare(self, instance, jobs) -> None:
        if jobs.resize not in NEEDS[self.variant]:
            raise InputError(
                instance.name,
                "$.metadata.gang.resize",
                f"{self.name} chooses {self.variant.replace('_', ', ')}: the workload must let "
                f"jobs run resized ({' or '.join(NEEDS[self.variant])}), not {jobs.resize!r}",
            )
        db = gavel_reference_db()
        self.data, self.instance = jobs, instance
        self.index = {jid: j for j, jid in enumerate(jobs.job_ids)}
        self.ranked: list[list[int]] = []
        count = jobs.type_count()
        closest: dict[str, ReferenceJob] = {}
        for k, job in enumerate(instance.jobs):
            own = job.model.name if job.model else None
            if not own:
                raise InputError(
                    instance.name,
                    f"$.jobs[{k}].model.name",
                    "the similarity policy needs the job's row of Gavel's table",
                )
            ref = closest.get(own)
            if ref is None:  # Algorithm 1 once per model row: jobs of one row share the answer
                try:
                    ref = closest[own] = db.closest(row_features(own), exclude=own)[0]
                except InputError as err:  # a model Algorithm 1 has no characteristics of
                    raise InputError(instance.name, f"$.jobs[{k}].model.name", err.reason) from err
            need = int(jobs.gang[k])
            usable = [
                r
                for r, t in enumerate(jobs.types)
                if jobs.throughput[k, r] > 0 and count[r] >= need
            ]
            if not usable and self.variant == "gpu":  # it would wait for ever
                raise InputError(
                    instance.name,
                    f"$.jobs[{k}].requested_workers",
                    f"{self.name} runs a job on one GPU type at its requested count; no type "
                    f"has {need} GPUs the job can use",
                )
            estimate = {r: ref.throughput.get((jobs.types[r], need)) for r in usable}
            known = [r for r in usable if estimate[r] is not None]
            # the reference's measured types, best first (Algorithm 2, line 6); a job whose
            # reference was measured on none of its types takes any, so that it cannot starve
            ranked = sorted(known, key=lambda r: (-estimate[r], jobs.types[r]))
            self.ranked.append(ranked or sorted(usable, key=lambda r: jobs.types[r]))
        # packing (Algorithm 3) tells the queue's jobs apart only by what decides a pair: their
        # kind. Each kind's admitted jobs in arrival order (done ones dropped when met), and
        # each (solo job's kind, type, row, queued kind)'s pair, worked out once
        self._kind = [
            (m, mem, tuple(row > 0), int(g))
            for m, mem, row, g in zip(jobs.models, jobs.memory_gb, jobs.throughput, jobs.gang)
        ]
        self._by_kind: dict[tuple, list[int]] = {}
        self._admitted = 0
        self._rank = [0] * jobs.n_jobs  # arrival rank (the engine's order)
        for i, j in enumerate(np.argsort(jobs.arrival, kind="stable").tolist()):
            self._rank[j] = i
        self._pairs: dict[tuple, tuple[float, float] | None] = {}
        self._examples: dict[tuple, list[int]] = {}  # a kind's first two jobs price its pairs
        self._priced = 0  # how many examples were filed: the kinds' rankings are that recent
        self._ranked_kinds: dict[tuple, tuple[int, list[list[tuple]]]] = {}
        self._group_of: dict[tuple, tuple[list, dict[tuple, int]]] = {}
        # the jobs Algorithm 3 may queue for a GPU (:meth:`_admit`)
        self._queued = [bool(g == 1 or jobs.resize != "none") for g in jobs.gang.tolist()]

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...] | Run]:
        d = self.data
        free = {r: list(gpus) for r, gpus in enumerate(d.gpus_of_type)}
        plan: dict[int, tuple[int, ...] | Run] = {}
        if self.keep:
            for j, gpus in state.held.items():
                if j in self.packed:
                    continue
                row = state.held_rows.get(j)
                plan[j] = Run(gpus, row) if row else gpus
                for g in gpus:
                    free[d.type_of[g]].remove(g)
        if self.variant == "gpu" and not self.exact:
            self._ranked_round(state, plan, free)
        else:
            self._round(state, plan, free)
        if self.pack:
            self.packed = self._pack(state, plan)
        return plan

    def _ranked_round(self, state: GangState, plan: dict, free: dict[int, list[int]]) -> None:
        """Algorithm 2 for the ``gpu`` variant: each job's types ranked once (``prepare``)."""
        gang, ranked = self.data.gang_sizes, self.ranked
        left = {r: len(gs) for r, gs in free.items()}
        unused = sum(left.values())
        chosen: dict[int, tuple[int, int, str | None]] = {}
        for j in state.active_in_order():  # stops once the GPUs are taken
            if not unused:
                break
            if j in plan:
                continue
            need = gang[j]
            for r in ranked[j]:
                if left[r] >= need:
                    chosen[j] = (r, need, None)
                    left[r] -= need
                    unused -= need
                    break
        self._place(state, plan, free, chosen)

    def _round(self, state: GangState, plan: dict, free: dict[int, list[int]]) -> None:
        """Algorithm 2 (or the exact round) on the round's own instance: the queue and the free
        GPUs per type."""
        d = self.data
        queue = [j for j in state.active() if j not in plan]
        counts = {d.types[r]: len(gs) for r, gs in free.items()}
        if not queue or not any(counts.values()):
            return
        inst = Instance(
            f"{self.instance.name}-r{state.round}",
            cluster_by_type(counts, self.instance.cluster.gpu_types),
            tuple(_job(self.instance.jobs[j], counts) for j in queue),
            metadata={"similarity": {"variant": self.variant}},
        )
        if self.exact:
            from hetsched.exact.solve import solve

            res = solve(
                inst,
                "similarity-allocation",
                "highs",
                time_limit=30,
                options={"estimated": self.exact == "estimated"},
            )
            if res.solution is None:
                raise HetschedError(
                    f"{self.name}: the exact round at t={state.now} found no solution "
                    f"({res.status.value})"
                )
            decision: dict[str, Option] = dict(res.solution)
        else:
            decision = greedy_round(round_view(inst))
        report = check_round(inst, decision)
        if not report.valid:
            raise HetschedError(
                f"{self.name}: invalid round at t={state.now}: {report.violations[0].message}"
            )
        kind = {t: r for r, t in enumerate(d.types)}
        chosen = {}
        for jid, o in decision.items():
            j = self.index[jid]
            chosen[j] = (kind[o.gpu_type], o.gpus, None if o.row == d.models[j] else o.row)
        self._place(state, plan, free, chosen)

    def _place(self, state: GangState, plan: dict, free: dict[int, list[int]], chosen) -> None:
        """The round's choices (job -> type, GPU count, row) on GPUs, in queue order: a job that
        runs on as it ran keeps its GPUs where they are still free (no restore), so those are
        placed first."""
        d, held, held_rows, gang = self.data, state.held, state.held_rows, self.data.gang_sizes
        same = {
            j: None
            for j, (r, n, row) in chosen.items()
            if j in held and (d.type_of[held[j][0]], len(held[j]), held_rows.get(j)) == (r, n, row)
        }
        was_free = {r: set(gs) for r, gs in free.items()}
        taken: set[int] = set()
        at = dict.fromkeys(free, 0)  # per type: free[r][:at[r]] are taken
        for j in [*same, *(j for j in chosen if j not in same)]:
            r, n, row = chosen[j]
            prev = held.get(j)
            # a packed pair held them both: the first of the two to be placed keeps them
            if j in same and all(g in was_free[r] and g not in taken for g in prev):
                gpus = prev
            else:  # the n lowest free GPUs of the type
                gs, i, picked = free[r], at[r], []
                while len(picked) < n and i < len(gs):
                    if gs[i] not in taken:
                        picked.append(gs[i])
                    i += 1
                at[r], gpus = i, tuple(picked)
            taken.update(gpus)
            plan[j] = Run(gpus, row) if row or n != gang[j] else gpus
        for r, gs in free.items():
            free[r] = [g for g in gs if g not in taken]

    def _pack(self, state: GangState, plan: dict) -> set[int]:
        """Algorithm 3 (or the exact packing) on this round: adds the packed jobs to ``plan``;
        returns them. A job that runs alone on one GPU may take a waiting job that can run on
        one GPU (as itself) onto it."""
        d = self.data
        gpus_of, row_of, solo = _solo_jobs(plan)
        if not solo:
            return set()
        self._admit(state, d)
        alike = [(self._kind[s], d.type_of[gpus_of[s][0]], row_of.get(s)) for s in solo]
        if self.exact:
            pairs = self._pack_exactly(state, plan, solo, alike)
        elif state.n_active() <= self.scan_limit * max(1, len(self._by_kind)):
            pairs = self._pack_from_waiting(state, plan, solo, alike)
        else:
            pairs = self._pack_greedily(state, plan, solo, alike)
        for s, q in pairs:
            plan[q] = gpus_of[s] if d.gang_sizes[q] == 1 else Run(gpus_of[s])
        return {q for _, q in pairs}

    def _pack_greedily(self, state, plan, solo: list[int], alike: list[tuple]) -> list[tuple]:
        """Algorithm 3 (:func:`hetsched.similarity.packing.greedy_packing`) read by kind: every waiting job
        of a kind pairs alike, so a solo job's pick is the first waiting job of its best kind
        (largest own share, then largest w, then the earliest in arrival order, as the printed
        algorithm breaks ties). Each kind's waiting jobs are read only as far as they are taken."""
        waiting: dict[tuple, Iterator[int]] = {}
        head: dict[tuple, int | None] = {}

        def first(kind: tuple) -> int | None:
            if kind not in head:
                waiting[kind] = self._waiting(state, self._by_kind[kind], plan)
                head[kind] = next(waiting[kind], None)
            return head[kind]

        pairs = []
        passed: dict[tuple, int] = {}  # key -> its groups found empty this round (they stay so)
        rank = self._rank.__getitem__
        for s, key in zip(solo, alike):
            groups = self._kinds_by_pair(key, s)  # tied kinds, best pair first
            i = passed.get(key, 0)
            while i < len(groups):
                group = groups[i]
                if len(group) == 1:  # the common case: no tie
                    q = first(group[0])
                else:
                    live = [j for j in map(first, group) if j is not None]
                    q = min(live, key=rank) if live else None
                if q is not None:
                    kind = self._kind[q]
                    head[kind] = next(waiting[kind], None)
                    pairs.append((s, q))
                    break
                i += 1
            passed[key] = i
        return pairs

    def _pack_from_waiting(self, state, plan, solo: list[int], alike: list[tuple]) -> list[tuple]:
        """The same pairs as :meth:`_pack_greedily`, found from the other side, for a short
        queue: the waiting jobs are listed by kind once (one pass over the active jobs), and a
        solo job takes the head of the waiting kind in its best group of pairs (then the
        earliest arrival within the group), instead of walking its ranked groups past the kinds
        with no waiting job. A queue is short when it has fewer active jobs than
        ``scan_limit`` x the kinds seen so far."""
        queued, kind_of = self._queued, self._kind
        waiting: dict[tuple, list[int]] = {}
        for j in state.active_in_order():
            if queued[j] and j not in plan:
                waiting.setdefault(kind_of[j], []).append(j)
        taken = dict.fromkeys(waiting, 0)  # per kind: its first ``taken`` waiting jobs paired
        rank = self._rank
        pairs = []
        for s, key in zip(solo, alike):
            if not waiting:
                break
            where = self._group_index(key, s)
            best = None  # (group, arrival rank, kind)
            for kind, js in waiting.items():
                g = where.get(kind)
                if g is not None and (best is None or (g, rank[js[taken[kind]]]) < best[:2]):
                    best = (g, rank[js[taken[kind]]], kind)
            if best is None:
                continue
            kind = best[2]
            pairs.append((s, waiting[kind][taken[kind]]))
            taken[kind] += 1
            if taken[kind] == len(waiting[kind]):
                del waiting[kind]
        return pairs

    def _group_index(self, key: tuple, s: int) -> dict[tuple, int]:
        """Kind -> the index of its group in :meth:`_kinds_by_pair` (key, s)."""
        groups = self._kinds_by_pair(key, s)
        cached = self._group_of.get(key)
        if cached is None or cached[0] is not groups:
            cached = self._group_of[key] = (
                groups,
                {kind: g for g, group in enumerate(groups) for kind in group},
            )
        return cached[1]

    def _kinds_by_pair(self, key: tuple, s: int) -> list[list[tuple]]:
        """The admitted kinds a solo job ``s`` alike ``key`` (its kind, type, row) may pair with,
        in groups of equal (own share, w), best first; worked out again when a kind has a new
        example job (its first or second)."""
        known = self._priced
        cached = self._ranked_kinds.get(key)
        if cached is None or cached[0] != known:
            scored: dict[tuple, list[tuple]] = {}
            for kind in self._by_kind:
                pair = self._pair_of(key, kind, s)
                if pair is not None:
                    scored.setdefault((pair[0], pair[0] + pair[1] - 1.0), []).append(kind)
            cached = self._ranked_kinds[key] = (
                known,
                [scored[v] for v in sorted(scored, key=lambda v: (-v[0], -v[1]))],
            )
        return cached[1]

    def _pack_exactly(self, state, plan, solo: list[int], alike: list[tuple]) -> list[tuple]:
        """The packing of largest total normalized throughput
        (:func:`hetsched.similarity.packing.optimal_packing`) over each kind's first ``len(solo)`` waiting
        jobs (no optimum takes more of one kind)."""
        d = self.data
        firsts = {
            kind: list(islice(self._waiting(state, members, plan), len(solo)))
            for kind, members in self._by_kind.items()
        }
        queue = sorted((j for js in firsts.values() for j in js), key=self._rank.__getitem__)
        if not queue:
            return []
        at = {j: b for b, j in enumerate(queue)}
        cols = {kind: [at[j] for j in js] for kind, js in firsts.items() if js}
        gain = np.full((len(solo), len(queue)), np.nan)
        own = np.full_like(gain, np.nan)
        for a, (s, key) in enumerate(zip(solo, alike)):
            for kind, c in cols.items():
                pair = self._pair_of(key, kind, s)
                if pair is not None:
                    own[a, c], gain[a, c] = pair[0], pair[0] + pair[1] - 1.0
        view = PackingView(d.job_ids, tuple(solo), (), tuple(queue), gain, own)
        return [(self.index[s], self.index[q]) for s, q in optimal_packing(view).pairs]

    def _admit(self, state: GangState, d) -> None:
        """File the jobs that arrived since the last look by kind (the engine's arrival order).
        A job of a gang other than 1 is never queued for a GPU unless jobs may run resized."""
        order = state.order
        while self._admitted < len(order) and state.arrived[order[self._admitted]]:
            j = int(order[self._admitted])
            self._admitted += 1
            if d.gang[j] == 1 or d.resize != "none":
                self._by_kind.setdefault(self._kind[j], []).append(j)
                examples = self._examples.setdefault(self._kind[j], [])
                if len(examples) < 2:  # a kind's first two jobs: one is not the solo job
                    examples.append(j)
                    self._priced += 1

    @staticmethod
    def _waiting(state: GangState, members: list[int], plan: dict) -> Iterator[int]:
        """A kind's jobs that wait (not done, not in ``plan``), in arrival order; the done jobs
        met on the way are dropped from ``members``."""
        i = 0
        while i < len(members):
            j = members[i]
            if state.done[j]:
                del members[i]
                continue
            i += 1
            if j not in plan:
                yield j

    def _pair_of(self, key: tuple, kind: tuple, s: int) -> tuple[float, float] | None:
        """:meth:`_pair` of solo job ``s`` (alike ``key``) and any other job of ``kind``, worked
        out once; None, not kept, while ``s`` is the only job of its kind so far (a job does not
        pair with itself)."""
        if (*key, kind) not in self._pairs:
            other = [q for q in self._examples[kind] if q != s]
            if not other:
                return None
            self._pairs[(*key, kind)] = self._pair(s, other[0], key[1], key[2])
        return self._pairs[(*key, kind)]

    def _pair(self, s: int, q: int, r: int, row) -> tuple[float, float] | None:
        """(the share of its own rate solo job s keeps, the share queued job q gets) when q
        joins s on its type-r GPU, s run as ``row``; None if they cannot share."""
        d = self.data
        solo_q = d.resize_fraction(q, r, 1)
        if d.throughput[q, r] <= 0 or solo_q <= 0:
            return None
        mine = d.pair_fraction(s, q, r, 1, (row, None)) / d.resize_fraction(s, r, 1, row)
        theirs = d.pair_fraction(q, s, r, 1, (None, row)) / solo_q
        return (mine, theirs) if mine > 0 and theirs > 0 else None


def _solo_jobs(plan: dict) -> tuple[dict, dict, list[int]]:
    """The round's GPUs and rows per job, and the jobs that run alone on one GPU (the ones
    Algorithm 3 may pack), in plan order."""
    gpus_of = {j: v.gpus if isinstance(v, Run) else v for j, v in plan.items()}
    row_of = {j: v.row for j, v in plan.items() if isinstance(v, Run)}
    return gpus_of, row_of, [j for j in plan if len(gpus_of[j]) == 1]


def _job(job: Job, types) -> Job:
    """A job of a round instance: the similarity model reads its row, GPU count and memory;
    Hare's per-task times (1 s, no sync, on every type) are not used."""
    return Job(
        job.id,
        job.arrival,
        1.0,
        1,
        1,
        {t: 1.0 for t in types},
        {t: 0.0 for t in types},
        requested_workers=job.requested_workers or job.tasks_per_round,
        memory_gb=job.memory_gb,
        model=ModelInfo(name=job.model.name),
    )
