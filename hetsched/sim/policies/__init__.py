"""Online policies for :func:`hetsched.sim.engine.simulate`, by name (``POLICIES``)."""

from __future__ import annotations

from functools import partial
from typing import Callable

from hetsched.errors import HetschedError
from hetsched.sim.policies.allox import AlloX
from hetsched.sim.policies.fifo import Fifo, GavelFifo, SchedHomo
from hetsched.sim.policies.hare_offline import HareOffline
from hetsched.sim.policies.las import Hlas, HlasP, Las2d
from hetsched.sim.policies.srtf import Srtf

POLICIES: dict[str, Callable[..., object]] = {
    "hare": HareOffline, "hare-earliest-finish": partial(HareOffline, rule="earliest_finish", name="hare-earliest-finish"),
    "hlas": Hlas, "hlas-p": HlasP, "las2d": Las2d, "gavel-fifo": GavelFifo,
    "fifo": Fifo, "sched-homo": SchedHomo, "srtf": Srtf, "allox": AlloX,
}


def make_policy(name: str, **options):
    if name not in POLICIES:
        raise HetschedError(f"unknown policy '{name}' (known: {', '.join(POLICIES)})")
    return POLICIES[name](**options)
