"""Dead gaps: GPU time between two tasks of one job that no other job can use (Hare_Sched (8)).

Let job n train two consecutive tasks on GPU g, the first ending at e, the next starting at b.
A task of another job o on g that meets [e, b) cannot overlap n's two tasks ((8): a GPU trains
one task at a time), so it lies inside [e, b): it starts at or after max(e, a_o) ((4)) and ends
by min(b, C_o). If no other job has a task short enough for that,

    max(e, a_o) + T^c_{o,g} > min(b, C_o^hi)     for every job o != n              (dead)

(C_o^hi: the completion bound every schedule within the incumbent meets,
:meth:`HareView.completion_upper_bounds`), then no task of any other job meets [e, b), and
neither does another job's dead gap (its own tasks would). So the dead gaps of all jobs and all
tasks are disjoint on every GPU: charging a column (one job's schedule) with its dead gaps as
well as its training keeps every capacity row of a job-schedule master valid, for every schedule
whose completions stay within C^hi.

Why it matters: a round-robin of rounds leaves each GPU idle for T^s and the barrier's wait
between two rounds of one job. The bucketed master (``models/hare_sched_buckets.py``) sums
capacity over a GPU class and a bucket, so it lets another job fill those few ticks with a task
many times longer. On hare-table2 6 x 8, seed 0, its master LP after 500 s is 466.7 with plain
columns and 495.5 with columns charged with their dead gaps (best schedule 501.63).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def dead_gaps(
    train: np.ndarray,
    arrival: np.ndarray,
    completion_hi: np.ndarray,
    n: int,
    tasks: Sequence[tuple[int, int, int]],
) -> list[tuple[int, int, int]]:
    """Job n's dead gaps as (GPU, first tick, end tick), for its ``tasks`` as (round, GPU, start
    tick); ``train`` [job, GPU], ``arrival`` and ``completion_hi`` per job, all in ticks."""
    per_gpu: dict[int, list[int]] = {}
    for _, g, start in tasks:
        per_gpu.setdefault(int(g), []).append(int(start))
    others = [o for o in range(train.shape[0]) if o != n]
    out = []
    for g, starts in sorted(per_gpu.items()):
        starts.sort()
        for a, b in zip(starts, starts[1:]):
            e = a + int(train[n, g])
            if b > e and not any(
                max(e, int(arrival[o])) + int(train[o, g]) <= min(b, int(completion_hi[o]))
                for o in others
            ):
                out.append((g, e, b))
    return out
