"""AlloX (Le et al., EuroSys'20) as Hare uses it as a baseline: at each decision instant, a
min-cost bipartite matching of waiting jobs to (idle GPU, position) slots, where putting job n
k-th on GPU m costs k p_{n,m} (its remaining work there delays itself and the k-1 jobs behind;
the sum is the total completion time of that single-GPU sequence). Jobs matched to position 1
start one task on their GPU. Clairvoyant: p_{n,m} = tasks left x T^c_{n,m}. Solved with
scipy's ``linear_sum_assignment``.

Scale: the matching is restricted to the ``CANDIDATES`` x |idle GPUs| waiting jobs with the
least remaining work on their best GPU (with long queues the full matching is cubic in the
queue and took minutes on the 480-job Philly window); the rest wait for a later instant. With
fewer waiting jobs than that, the matching is the full one.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from hetsched.sim.engine import Policy, SimState

CANDIDATES = 4


class AlloX(Policy):
    name, clairvoyant = "allox", True

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        v = state.view
        jobs = list(state.waiting_jobs())  # AlloX weighs every waiting job
        gpus = state.idle_gpus
        if len(jobs) > CANDIDATES * len(gpus):
            work = [
                (
                    (state.total_rounds(n) - int(state.rounds_done[n])) * int(v.tasks_per_round[n])
                    - int(state.started[n])
                )
                * float(v.train[n, gpus].min())
                for n in jobs
            ]
            keep = sorted(np.argsort(work, kind="stable")[: CANDIDATES * len(gpus)])
            jobs = [jobs[i] for i in keep]
        positions = -(-len(jobs) // len(gpus))  # enough slots for every job
        left = np.array(
            [
                (state.total_rounds(n) - int(state.rounds_done[n])) * int(v.tasks_per_round[n])
                - int(state.started[n])
                for n in jobs
            ],
            dtype=float,
        )
        p = left[:, None] * v.train[np.ix_(jobs, gpus)]  # p_{n,m}
        cost = np.concatenate(
            [(k + 1) * p for k in range(positions)], axis=1
        )  # columns: (position, GPU)
        rows, cols = linear_sum_assignment(cost)
        # a job matched to a GPU it cannot run on (train time NEVER) waits
        return [
            (jobs[i], gpus[c])
            for i, c in zip(rows, cols)
            if c < len(gpus) and state.can_run(jobs[i], gpus[c])
        ]
