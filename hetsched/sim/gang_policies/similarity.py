"""The AppSci'24 model-similarity policy (Secs. 4.1-4.2, Algorithms 1-2) as a gang-engine policy,
so that it runs beside Gavel, Tiresias, Hadar and YARN-CS on the same workloads (issue 19).

Before time 0 each job is matched to its most similar *other* model of Gavel's table (Algorithm
1: cosine similarity of layers, parameters and batch size; the job's own row is left out, as for
a new model) and its GPU types are ranked by that reference's measured throughput at the job's
GPU count (Algorithm 2, line 6). Every round the active jobs, in arrival order, each take their
first ranked type with enough free GPUs (lines 7-13).

``similarity`` remakes every decision each round (the paper's "cd"); ``similarity:keep`` lets a
running job keep its GPUs until it completes and gives the queue what is left.

What the gang engine does not model, and so this policy does not do: the GPU count and batch
size as decisions (the engine runs a job as a gang of its requested GPUs; the paper's variant
``gpu``) and job packing (Algorithm 3: the engine has no space sharing). The full policy with
both runs in ``hetsched similarity-sim`` on its own workloads.

A job must name its row of Gavel's table (``model.name``); the workloads built from the Philly
trace, Gavel's traces and ``gavel-poisson`` do.
"""

from __future__ import annotations

from hetsched.errors import InputError
from hetsched.sim.gang_engine import GangState
from hetsched.similarity.reference import gavel_reference_db, row_features


class Similarity:
    clairvoyant = False

    def __init__(self, mode: str = "change", seed: int = 0):
        if mode not in ("change", "keep"):
            raise InputError("policy", "similarity:MODE", f"'change' or 'keep', not {mode!r}")
        self.keep = mode == "keep"
        self.name = "similarity:keep" if self.keep else "similarity"

    def prepare(self, instance, jobs) -> None:
        db = gavel_reference_db()
        self.data = jobs
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
        return plan
