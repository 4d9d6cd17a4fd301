"""The registry of audited claims: name -> :class:`hetsched.audit.engine.Claim`."""

from __future__ import annotations

from hetsched.audit.engine import Claim
from hetsched.core.errors import HetschedError


def claims() -> dict[str, Claim]:
    from hetsched.audit import hadar, hadar_competitive, hare, packing, placement

    return {
        c.name: c
        for c in (
            hare.CLAIM,
            hare.CLAIM_SUBSETS,
            hadar.CLAIM,
            hadar_competitive.CLAIM,
            packing.CLAIM,
            placement.CLAIM,
        )
    }


def find_claim(name: str) -> Claim:
    known = claims()
    if name not in known:
        raise HetschedError(f"unknown claim '{name}' (known: {', '.join(known)})")
    return known[name]
