"""The one name table of the simulators' online policies: every policy by name, the engine
that runs it (``task``: :func:`hetsched.sim.engine.simulate`, Hare's task model; ``job``:
:func:`hetsched.sim.gang_engine.simulate_gang`, gangs in rounds) and what ``NAME:ARG`` means.
``simulate``, ``compare``, sweeps, benchmarks and the CLI's help all read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from hetsched.core.errors import HetschedError

_TASK, _GANG = "hetsched.sim.policies", "hetsched.sim.gang_policies"


@dataclass(frozen=True)
class PolicyEntry:
    """A policy's class (``"module:Class"``, imported when a policy is made, so that listing
    the names loads nothing), its engine (``task`` or ``job``), the meaning of ``:ARG`` (None:
    it takes none) and fixed keyword arguments."""

    target: str
    level: str
    argument: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    def factory(self) -> Any:
        module, _, name = self.target.partition(":")
        return getattr(import_module(module), name)


#: every online policy by name
POLICIES: dict[str, PolicyEntry] = {
    "hare": PolicyEntry(f"{_TASK}.hare_offline:HareOffline", "task"),
    "hare-earliest-finish": PolicyEntry(
        f"{_TASK}.hare_offline:HareOffline",
        "task",
        kwargs={"rule": "earliest_finish", "name": "hare-earliest-finish"},
    ),
    "hlas": PolicyEntry(f"{_TASK}.las:Hlas", "task", "U"),  # U GPU groups (TCC eqs. (4)-(6))
    "hlas-p": PolicyEntry(f"{_TASK}.hlas_p:HlasP", "task", "U"),
    "las2d": PolicyEntry(f"{_TASK}.las:Las2d", "task"),
    "gavel-fifo": PolicyEntry(f"{_TASK}.fifo:GavelFifo", "task"),
    "fifo": PolicyEntry(f"{_TASK}.fifo:Fifo", "task"),
    "sched-homo": PolicyEntry(f"{_TASK}.fifo:SchedHomo", "task"),
    "srtf": PolicyEntry(f"{_TASK}.srtf:Srtf", "task"),
    "allox": PolicyEntry(f"{_TASK}.allox:AlloX", "task"),
    "gavel": PolicyEntry(f"{_GANG}.gavel:Gavel", "job", "ALLOCATION-POLICY"),
    # hadar:bnb:NODES: the slot searches' node budget (20,000 by default)
    "hadar": PolicyEntry(f"{_GANG}.hadar:Hadar", "job", "bnb|dp[:NODES]"),
    "harmony": PolicyEntry(f"{_GANG}.harmony:Harmony", "job", "PLACEMENT-METHOD[:ORDER[:SECONDS]]"),
    "harmony-greedy": PolicyEntry(f"{_GANG}.harmony:Harmony", "job"),  # the default method
    "similarity": PolicyEntry(f"{_GANG}.similarity:Similarity", "job", "TOKENS"),
    "tiresias": PolicyEntry(f"{_GANG}.tiresias:Tiresias", "job", "T1,T2,..."),
    "yarn-cs": PolicyEntry(f"{_GANG}.yarn_cs:YarnCs", "job", "strict"),
}


def names(level: str | None = None) -> tuple[str, ...]:
    """The policies of one engine (``task`` or ``job``), or all."""
    return tuple(n for n, e in POLICIES.items() if level is None or e.level == level)


def usage(level: str | None = None) -> list[str]:
    """Each policy (of one engine, or all) as it may be written: ``NAME`` or ``NAME[:ARG]``."""
    return [
        f"{n}[:{e.argument}]" if e.argument else n
        for n in sorted(names(level))
        for e in [POLICIES[n]]
    ]


def is_job_level(name: str) -> bool:
    """True for the gang policies (simulated by the round-based gang engine)."""
    entry = POLICIES.get(name.split(":", 1)[0])
    return entry is not None and entry.level == "job"


def make_policy(name: str, seed: int = 0, **options):
    """A policy object by name (``NAME`` or ``NAME:ARG``); job-level policies take the seed."""
    base, _, arg = name.partition(":")
    entry = POLICIES.get(base)
    if entry is None or (arg and entry.argument is None):
        raise HetschedError(f"unknown policy '{name}' (known: {', '.join(usage())})")
    cls, options = entry.factory(), {**entry.kwargs, **options}
    if entry.level == "job":
        return cls(arg, seed=seed, **options) if arg else cls(seed=seed, **options)
    if arg:  # the task-level policies' argument: a number of GPU groups
        if not arg.isdigit() or int(arg) < 1:
            raise HetschedError(
                f"policy '{base}:U' takes a number of GPU groups U >= 1 (got '{arg}')"
            )
        return cls(groups=int(arg), **options)
    return cls(**options)
