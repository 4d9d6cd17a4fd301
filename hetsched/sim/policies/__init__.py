"""Task-level online policies (for :func:`hetsched.sim.engine.simulate`). Every policy, task- or
job-level, is named in the one table :mod:`hetsched.sim.registry`."""

from __future__ import annotations

from hetsched.sim.policies.allox import AlloX
from hetsched.sim.policies.fifo import Fifo, GavelFifo, SchedHomo
from hetsched.sim.policies.hare_offline import HareOffline
from hetsched.sim.policies.hlas_p import HlasP
from hetsched.sim.policies.las import Hlas, Las2d
from hetsched.sim.policies.srtf import Srtf

__all__ = [
    "AlloX",
    "Fifo",
    "GavelFifo",
    "HareOffline",
    "Hlas",
    "HlasP",
    "Las2d",
    "SchedHomo",
    "Srtf",
]
