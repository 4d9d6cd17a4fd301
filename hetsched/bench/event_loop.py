"""The baseline of issue 21's event-rate goal: a minimal event loop with the semantics of the task
engine (:mod:`hetsched.sim.engine`) under the ``fifo`` policy, written for speed and nothing else.

Jobs arrive at a_n; a ready task takes the idle GPU where T^c + T^s is least (ties: the lower GPU
index), jobs in arrival order; the GPU is busy while the task trains, and round r + 1 becomes
ready when every task of round r has trained and synced. No policy protocol, no validation, no
schedule kept: only completion times, which must equal the engine's.
"""

from __future__ import annotations

import heapq
from bisect import insort

from hetsched.hare.view import HareView

ARRIVAL, TRAIN_END, ROUND_END = 0, 1, 2


def minimal_fifo(view: HareView) -> tuple[list[float], int]:
    """(C_n per job, events processed) of ``fifo`` on the instance's view."""
    train = view.train.tolist()
    total = (view.train + view.sync).tolist()
    sync = view.sync.tolist()
    rounds = view.rounds.tolist()
    width = view.tasks_per_round.tolist()
    arrival = view.arrival.tolist()
    n_jobs = len(arrival)
    rank = sorted(range(n_jobs), key=lambda n: (arrival[n], n))
    position = [0] * n_jobs
    for i, n in enumerate(rank):
        position[n] = i
    heap = [(arrival[n], ARRIVAL, i, n) for i, n in enumerate(rank)]
    heapq.heapify(heap)
    seq = n_jobs
    idle = list(range(view.n_gpus))  # sorted
    waiting: list[tuple[int, int]] = []  # (position, job), sorted
    ready = [0] * n_jobs
    started = [0] * n_jobs
    done_rounds = [0] * n_jobs
    round_end = [0.0] * n_jobs
    completion = [0.0] * n_jobs
    events = 0
    while heap:
        now = heap[0][0]
        while heap and heap[0][0] == now:
            _, kind, _, x = heapq.heappop(heap)
            events += 1
            if kind == ARRIVAL:
                ready[x] = width[x]
                insort(waiting, (position[x], x))
            elif kind == TRAIN_END:
                insort(idle, x)
            else:
                done_rounds[x] += 1
                started[x] = 0
                if done_rounds[x] == rounds[x]:
                    completion[x] = now
                else:
                    ready[x] = width[x]
                    insort(waiting, (position[x], x))
        i = 0
        while i < len(waiting) and idle:
            n = waiting[i][1]
            times = total[n]
            while ready[n] and idle:
                m = min(idle, key=times.__getitem__)  # idle is sorted: ties go to the lower index
                idle.remove(m)
                end = now + train[n][m]
                heapq.heappush(heap, (end, TRAIN_END, seq, m))
                seq += 1
                finish = end + sync[n][m]
                round_end[n] = max(round_end[n], finish) if started[n] else finish
                started[n] += 1
                ready[n] -= 1
            if ready[n] == 0:
                del waiting[i]
                heapq.heappush(heap, (round_end[n], ROUND_END, seq, n))
                seq += 1
            else:
                i += 1
    return completion, events
