"""The one worker pool (hetsched/core/executors.py): a stopped pool leaves no process behind."""

import multiprocessing
import time

from hetsched.core.executors import WorkerPool, _reap


class KilledProcess:
    """A killed worker whose pipe has closed (so ``join`` returns) but which the kernel lets
    be reaped only after ``polls`` more looks."""

    def __init__(self, polls: int) -> None:
        self.polls = polls

    def join(self, timeout: float | None = None) -> None:
        pass

    def is_alive(self) -> bool:
        self.polls -= 1
        return self.polls > 0


def test_reaping_waits_past_join_until_each_process_is_gone():
    workers = [KilledProcess(3), KilledProcess(1)]
    _reap(workers, 60.0)
    assert [w.polls for w in workers] == [0, 0]


def test_a_stopped_pool_leaves_no_worker_behind():
    """stop() right after a task starts (the case of the portfolio's second process when the
    schedule is proven first): the worker is killed and reaped before stop() returns."""
    for _ in range(3):
        pool = WorkerPool("local", 1)
        pool.submit(time.sleep, 60)
        pool.stop()
        assert not multiprocessing.active_children()
