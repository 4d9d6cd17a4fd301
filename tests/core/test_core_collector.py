"""The collector pause the simulators run under: passes off inside, the caller's setting back
after, also when the run fails."""

import gc

import pytest

from hetsched.core.collector import collector_paused
from hetsched.core.errors import HetschedError
from hetsched.sim.engine import simulate
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import gavel_poisson


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_inside_and_restored_after(enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        with pytest.raises(ValueError), collector_paused():
            raise ValueError
        assert gc.isenabled() == enabled
    finally:
        gc.enable()


class Inside:
    """A policy that records whether the collector runs while it decides, then fails."""

    name, clairvoyant = "inside", False
    seen: list[bool] = []

    def prepare(self, instance, view) -> None:
        pass

    def assign(self, state):
        Inside.seen.append(gc.isenabled())
        n, m = state.waiting_jobs()[0], state.idle_gpus[0]
        return [(n, m), (n, m)]  # the second start is on a busy GPU: the engine stops the run


def test_a_run_decides_with_the_collector_paused_and_restores_it_when_it_fails():
    inst = gavel_poisson(0, n_jobs=5)
    assert gc.isenabled()
    with pytest.raises(HetschedError, match="busy GPU"):
        simulate(inst, Inside(), record_events=False)
    assert Inside.seen == [False] and gc.isenabled()
    simulate(inst, make_policy("fifo"), record_events=False)
    assert gc.isenabled()
