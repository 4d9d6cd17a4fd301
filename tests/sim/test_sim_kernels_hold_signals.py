"""Every compiled kernel Hadar's policy calls runs with the signal handlers held
(:func:`hetsched.core.deadline.signals_held`): a time limit's signal that arrives while a kernel
runs is raised when it returns, never inside it (there it came back as a ``SystemError``, an
internal error where ``--time-limit`` was meant; seen under load on the placement kernel)."""

import pytest

from hetsched.core import deadline
from hetsched.hadar import dp_kernel
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_policies import cell_gpus
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import load_workload


@pytest.mark.parametrize(
    "module, kernel",
    [
        (cell_gpus, "place"),
        (dp_kernel, "start"),
        (dp_kernel, "sweep"),
        (dp_kernel, "first_indices"),
    ],
)
def test_hadar_calls_the_kernel_with_the_signals_held(monkeypatch, module, kernel):
    real, depths = getattr(module, kernel), []

    def watched(*args):
        depths.append(deadline._HOLDS.depth)
        return real(*args)

    monkeypatch.setattr(module, kernel, watched)
    simulate_gang(load_workload("gavel-poisson:stable", n_jobs=60), make_policy("hadar"))
    assert depths and min(depths) > 0
