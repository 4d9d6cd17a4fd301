"""The AppSci'24 model-similarity policy (Secs. 4.1-4.2, Algorithms 1-2) as a gang-engine policy,
so that it runs beside Gavel, Tiresias, Hadar and YARN-CS on the same workloads (issue 19).

Before time 0 each job is matched to its most similar *other* model of Gavel's table (Algorithm
1: cosine similarity of layers, parameters and batch size; the job's own row is left out, as for
a new model) and its GPU types are ranked by that reference's measured throughput at the job's
GPU count (Algorithm 2, line 6). Every round the active jobs, in arrival order, each take their
first ranked type with enough free GPUs (lines 7-13).

``similarity`` remakes every decision each round (the paper's "cd"); ``similarity:keep`` lets a
running job keep its GPUs until it completes and gives the queue what is left.
``similarity:pack`` and ``similarity:keep-pack`` then pack (Algorithm 3, Sec. 4.3,
:func:`hetsched.packing.greedy_packing`): each job placed alone on one GPU, in scheduling order,
may take one waiting job onto its GPU, the one that keeps its own throughput highest (Gavel's
measured pairs; the engine runs the pair at those rates, :mod:`hetsched.sim.gang_model`). A
packed job is not kept: it is decided again next round.

What the gang engine does not model, and so this policy does not do: the GPU count and batch
size as decisions (the engine runs a job as a gang of its requested GPUs; the paper's variant
``gpu``). The full policy with them runs in ``hetsched similarity-sim`` on its own workloads.

A job must name its row of Gavel's table (``model.name``); the workloads built from the Philly
trace, Gavel's traces and ``gavel-poisson`` do.
"""

from __future__ import annotations

import numpy as np

from hetsched.errors import InputError
from hetsched.packing import greedy_packing
from hetsched.packing.problem import PackingView
from hetsched.sim.gang_engine import GangState
from hetsched.similarity.reference import gavel_reference_db, row_features


class Similarity:
    clairvoyant = False

    MODES = ("change", "keep", "pack", "keep-pack")

    def __init__(self, mode: str = "change", seed: int = 0):
        if mode not in self.MODES:
            raise InputError(
                "policy", "similarity:MODE", f"one of {', '.join(self.MODES)}, not {mode!r}"
            )
        self.keep = mode.startswith("keep")
        self.pack = mode.endswith("pack")
        self.name = "similarity" if mode == "change" else f"similarity:{mode}"
        self.packed: set[int] = set()  # jobs packed onto another's GPU last round

    def prepare(self, instance, jobs) -> None:
        db = gavel_reference_db()
        self.data = jobs
        self.index = {jid: j for j, jid in enumerate(jobs.job_ids)}
        self.ranked: list[list[int]] = []
        count = jobs.type_count()
        for k, job in enumerate(instance.jobs):
            own = job.model.name if job.model else None
            if not own:
                raise InputError(
                    instance.name,
                    f"$.jobs[{k}].model.name",
                    "the similarity policy needs the job's row of Gavel's table",
                )
            ref, _ = db.closest(row_features(own), exclude=own)
            need = int(jobs.gang[k])
            usable = [
                r
                for r, t in enumerate(jobs.types)
                if jobs.throughput[k, r] > 0 and count[r] >= need
            ]
            estimate = {r: ref.throughput.get((jobs.types[r], need), 0.0) for r in usable}
            self.ranked.append(sorted(usable, key=lambda r: (-estimate[r], jobs.types[r])))

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        d = self.data
        free = {r: list(gpus) for r, gpus in enumerate(d.gpus_of_type)}
        plan: dict[int, tuple[int, ...]] = {}
        if self.keep:
            for j, gpus in state.held.items():
                if j in self.packed:
                    continue
                plan[j] = gpus
                for g in gpus:
                    free[int(d.gpu_type[g])].remove(g)
        for j in state.active():
            if not any(free.values()):
                break
            if j in plan:
                continue
            need = int(d.gang[j])
            for r in self.ranked[j]:
                if len(free[r]) >= need:
                    prev = state.held.get(j)
                    if prev and all(g in free[r] for g in prev):
                        gpus = prev  # it ran here last round: no move, no restore
                    else:
                        gpus = tuple(free[r][:need])
                    plan[j] = gpus
                    free[r] = [g for g in free[r] if g not in gpus]
                    break
        if self.pack:
            self.packed = self._pack(state, plan)
        return plan

    def _pack(self, state: GangState, plan: dict[int, tuple[int, ...]]) -> set[int]:
        """Algorithm 3 on this round: adds the packed jobs to ``plan``; returns them."""
        d = self.data
        solo = [j for j in plan if d.gang[j] == 1]
        if not solo:
            return set()
        # a job of the queue is only told apart by what decides a pair: of each kind, the first
        # len(solo) in arrival order are all Algorithm 3 can take (it breaks ties by order)
        seen: dict[tuple, int] = {}
        queue = []
        for j in state.active():
            if j in plan or d.gang[j] != 1:
                continue
            kind = (d.models[j], d.memory_gb[j], tuple(d.throughput[j] > 0))
            if seen.get(kind, 0) < len(solo):
                seen[kind] = seen.get(kind, 0) + 1
                queue.append(j)
        if not queue:
            return set()
        gain = np.full((len(solo), len(queue)), np.nan)
        own = np.full_like(gain, np.nan)
        for a, s in enumerate(solo):
            r = int(d.gpu_type[plan[s][0]])
            for b, q in enumerate(queue):
                mine, theirs = d.pair_fraction(s, q, r), d.pair_fraction(q, s, r)
                if mine > 0 and theirs > 0 and d.throughput[q, r] > 0:
                    own[a, b], gain[a, b] = mine, mine + theirs - 1.0
        view = PackingView(d.job_ids, tuple(solo), (), tuple(queue), gain, own)
        packed = set()
        for sj, qj in greedy_packing(view).pairs:
            plan[self.index[qj]] = plan[self.index[sj]]
            packed.add(self.index[qj])
        return packed
