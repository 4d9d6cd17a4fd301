"""Online policies by name: task-level ones (``POLICIES``, for :func:`hetsched.sim.engine.simulate`)
and job-level ones (``GANG_POLICIES``, for :func:`hetsched.sim.gang_engine.simulate_gang`).
A name may carry one argument after a colon: ``gavel:makespan``, ``tiresias:3600,36000``, ``hadar:dp``, ``hlas:20`` (HLAS on 20 GPU groups)."""

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
    "hare": HareOffline,
    "hare-earliest-finish": partial(
        HareOffline, rule="earliest_finish", name="hare-earliest-finish"
    ),
    "hlas": Hlas,
    "hlas-p": HlasP,
    "las2d": Las2d,
    "gavel-fifo": GavelFifo,
    "fifo": Fifo,
    "sched-homo": SchedHomo,
    "srtf": Srtf,
    "allox": AlloX,
}

GROUPED = ("hlas", "hlas-p")  # take ``:U``, a number of GPU groups (eqs. (4)-(6) of the TCC paper)


def is_job_level(name: str) -> bool:
    """True for the gang policies (simulated by the round-based gang engine)."""
    from hetsched.sim.gang_policies import GANG_POLICIES

    return name.split(":", 1)[0] in GANG_POLICIES


def make_policy(name: str, seed: int = 0, **options):
    """A policy object by name (``NAME`` or ``NAME:ARG``); job-level policies take the seed."""
    from hetsched.sim.gang_policies import GANG_POLICIES

    base, _, arg = name.partition(":")
    if base in GANG_POLICIES:
        cls = GANG_POLICIES[base]
        return cls(arg, seed=seed, **options) if arg else cls(seed=seed, **options)
    if arg and base in GROUPED:
        if not arg.isdigit() or int(arg) < 1:
            raise HetschedError(
                f"policy '{base}:U' takes a number of GPU groups U >= 1 (got '{arg}')"
            )
        return POLICIES[base](groups=int(arg), **options)
    if name not in POLICIES:
        known = ", ".join(
            [
                *(f"{p}[:U]" if p in GROUPED else p for p in POLICIES),
                *(f"{g}[:ARG]" for g in GANG_POLICIES),
            ]
        )
        raise HetschedError(f"unknown policy '{name}' (known: {known})")
    return POLICIES[name](**options)
