"""First-come-first-served baselines (Hare Sec. 7's comparisons).

* ``gavel-fifo``: Gavel's FIFO in Hare's evaluation: the head job's whole round starts together on
  the fastest idle GPUs for it, and waits until as many GPUs as it has tasks are idle
  (head-of-line blocking, gang start). A round with more tasks than the cluster has GPUs starts
  when every GPU is idle and places the rest as GPUs free up.
* ``sched-homo``: heterogeneity-oblivious FIFO: ready tasks to idle GPUs in index order, no gang
  (the relaxed synchronization of Hare), no regard for speed.
* ``fifo``: FIFO that uses the relaxed synchronization and speed (each task to its fastest idle GPU).
"""

from __future__ import annotations

from hetsched.instance.gavel_table import NEVER
from hetsched.sim.engine import Policy, SimState
from hetsched.sim.policies.common import fill_fastest, fill_in_gpu_order, gang_size


class GavelFifo(Policy):
    name, clairvoyant = "gavel-fifo", False

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        free = state.idle_gpus
        out: list[tuple[int, int]] = []
        every, anywhere = state.task_times, state.runs_anywhere
        for n in state.waiting_jobs():
            if out:  # the GPUs the jobs before took
                used = {m for _, m in out}
                free = [m for m in free if m not in used]
            need = gang_size(state, n)
            if need > len(free):
                break  # the head job waits for its GPUs; nobody overtakes it
            if not anywhere[n]:
                times = every[n]
                if need > sum(1 for m in free if times[m] < NEVER):
                    break
            out += fill_fastest(state, [n], free if out else None)  # None: every idle GPU
        return out


class SchedHomo(Policy):
    name, clairvoyant = "sched-homo", False

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        return fill_in_gpu_order(state, state.waiting_jobs())


class Fifo(Policy):
    name, clairvoyant = "fifo", False

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        return fill_fastest(state, state.waiting_jobs())
