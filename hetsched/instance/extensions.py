"""The papers' extensions of an instance: typed problem data under ``metadata`` that one
paper's methods need and the others ignore. Each is declared here twice, as a JSON Schema
fragment (part of ``instances/schema.json``, so a file is checked when it is read and an
instance made in code when it is made) and as a frozen dataclass with the paper's defaults,
which the paper's view reads (``instance.extensions.hadar`` ...).

- ``hadar`` (:class:`HadarOptions`): Hadar's slot length L, the readings of JCT and progress,
  the utility and the horizon T (``hadar-2024.txt``, Sec. 3).
- ``packing`` (:class:`PackingRound`): the round of the similarity paper's Algorithm 3:
  which GPU each scheduled job runs on alone, and the reading of "throughput".
- ``similarity`` (:class:`SimilarityOptions`): which features Algorithm 1 compares.
- ``hlas`` / ``hlas_p`` (:class:`HlasOptions`): HLAS's queue thresholds and HLAS-P's
  minimum-rounds hints (``hare-hlas-tcc24.txt``).
- ``gang`` (:class:`GangOptions`): what the gang simulator lets a policy change in a job's run
  (its GPU count, its batch size: the AppSci'24 policy's decisions).
- ``placement`` (:class:`PlacementData`): Harmony's placement problem (``harmony-ton22.txt``):
  server capacities, parameter servers and demands per job, jobs already placed, overrides of
  the interference and communication coefficients.

Everything else under ``metadata`` is free-form provenance (generator, seed, source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Mapping

#: Hadar's readings of JCT: the offset added to f - a (``hadar/view.py``)
JCT_READINGS = {"f-a+1": 1, "f-a": 0}
#: Hadar's utilities (``hadar/utility.py``)
UTILITY_NAMES = ("effective-throughput", "reciprocal-jct", "finish-time-fairness")
#: Hadar's readings of progress per slot: (1a) as written, or the bottleneck alone
PROGRESS_READINGS = ("per-worker", "bottleneck")
#: the readings of the value of a packing (``packing/problem.py``)
PACKING_METRICS = ("normalized", "raw")
#: the feature sets of the similarity paper's Algorithm 1 (``similarity/round.py``)
SIMILARITY_VARIANTS = ("gpu", "gpu_ngpu", "gpu_ngpu_bs")
#: what a gang-engine policy may change in a job's run (``sim/gang_model.py``)
RESIZE_MODES = ("none", "count", "count-batch")
#: the resources of Harmony's placement model
RESOURCES = ("gpu", "cpu", "bandwidth")

_NAME = {"type": "string", "minLength": 1}
_NUMBER = {"type": "number", "minimum": 0}
_COUNT = {"type": "integer", "minimum": 0}


def _map(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "propertyNames": {"minLength": 1}, "additionalProperties": values}


def _closed(properties: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "additionalProperties": False,
        "properties": properties,
    }


_RESOURCE_MAP = _closed({r: _NUMBER for r in RESOURCES}, "amount per resource")

#: JSON Schema of each extension, by its key under ``metadata``
SCHEMAS: dict[str, dict[str, Any]] = {
    "hadar": _closed(
        {
            "slot_seconds": {"type": "number", "exclusiveMinimum": 0},
            "progress": {"enum": list(PROGRESS_READINGS)},
            "jct": {"enum": list(JCT_READINGS)},
            "utility": {"enum": list(UTILITY_NAMES)},
            "horizon_slots": {"type": "integer", "minimum": 1},
        },
        "Hadar: slot length L (s), readings of progress and JCT, utility, horizon T (slots)",
    ),
    "packing": {
        **_closed(
            {"scheduled": _map(_NAME), "metric": {"enum": list(PACKING_METRICS)}},
            "the round to pack: scheduled job id -> the GPU it runs on alone; the metric",
        ),
        "required": ["scheduled"],
    },
    "similarity": _closed(
        {"variant": {"enum": list(SIMILARITY_VARIANTS)}, "unseen": {"type": "boolean"}},
        "Algorithm 1's features; whether a job's own row is hidden from the reference",
    ),
    "gang": _closed(
        {"resize": {"enum": list(RESIZE_MODES)}},
        "the gang simulator: may a policy run a job on another GPU count (and batch size)",
    ),
    "hlas": _closed(
        {"thresholds": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}}},
        "HLAS's queue thresholds (attained service, GPU-seconds)",
    ),
    "hlas_p": _closed(
        {"min_rounds": _map({"type": "integer", "minimum": 0})},
        "HLAS-P's hints: job id -> minimum rounds",
    ),
    "placement": _closed(
        {
            "servers": _map(_RESOURCE_MAP),
            "jobs": _map(
                _closed(
                    {
                        "parameter_servers": _COUNT,
                        "worker": _RESOURCE_MAP,
                        "ps": _RESOURCE_MAP,
                        "standalone_speed": {"type": "number", "exclusiveMinimum": 0},
                        "placed": _map(
                            _closed(
                                {"workers": _COUNT, "parameter_servers": _COUNT},
                                "tasks already on this server",
                            )
                        ),
                    },
                    "a job's placement data",
                )
            ),
            "interference": _map(_map(_NUMBER)),
            "communication": _map(_NUMBER),
            "min_speed_fraction": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "Harmony's placement problem (servers, jobs, coefficient overrides)",
    ),
}


@cache
def metadata_validator() -> Any:
    """The compiled validator of ``{"metadata": {...}}`` against :data:`SCHEMAS` (the paths of
    its errors are the instance file's)."""
    import jsonschema

    return jsonschema.Draft202012Validator(
        {"type": "object", "properties": {"metadata": {"type": "object", "properties": SCHEMAS}}}
    )


@dataclass(frozen=True)
class HadarOptions:
    """``metadata.hadar``: L, the readings of progress and JCT, the utility, T (None: long
    enough for every job at its slowest type)."""

    slot_seconds: float = 360.0
    progress: str = "per-worker"
    jct: str = "f-a+1"
    utility: str = "effective-throughput"
    horizon_slots: int | None = None


@dataclass(frozen=True)
class PackingRound:
    """``metadata.packing``: scheduled job id -> the GPU it runs on alone; the metric."""

    scheduled: Mapping[str, str]
    metric: str = "normalized"


@dataclass(frozen=True)
class SimilarityOptions:
    """``metadata.similarity``: Algorithm 1's features; whether a job's own row is hidden."""

    variant: str = "gpu_ngpu"
    unseen: bool = True


@dataclass(frozen=True)
class GangOptions:
    """``metadata.gang``: ``resize`` ``none`` (a job runs as its requested gang), ``count`` (on
    any GPU count Gavel's table measured for its model) or ``count-batch`` (also as any batch
    size of its model family)."""

    resize: str = "none"


@dataclass(frozen=True)
class HlasOptions:
    """``metadata.hlas`` and ``metadata.hlas_p``: queue thresholds; minimum-rounds hints."""

    thresholds: tuple[float, ...] | None = None
    min_rounds: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PlacedTasks:
    workers: int = 0
    parameter_servers: int = 0


@dataclass(frozen=True)
class PlacementJob:
    """A job's entry of ``metadata.placement.jobs``; None: the model's default."""

    parameter_servers: int = 0
    worker: Mapping[str, float] | None = None
    ps: Mapping[str, float] | None = None
    standalone_speed: float | None = None
    placed: Mapping[str, PlacedTasks] | None = None  # None: a new job of this interval


@dataclass(frozen=True)
class PlacementData:
    """``metadata.placement``: server capacities (None: the testbed server's), job data, and
    overrides of the interference and communication coefficients."""

    servers: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    jobs: Mapping[str, PlacementJob] = field(default_factory=dict)
    interference: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    communication: Mapping[str, float] = field(default_factory=dict)
    min_speed_fraction: float | None = None


@dataclass(frozen=True)
class Extensions:
    """The typed extensions an instance carries (None where absent)."""

    hadar: HadarOptions | None = None
    packing: PackingRound | None = None
    similarity: SimilarityOptions | None = None
    gang: GangOptions | None = None
    hlas: HlasOptions | None = None
    placement: PlacementData | None = None


def _floats(d: Mapping[str, Any] | None) -> dict[str, float] | None:
    return None if d is None else {k: float(v) for k, v in d.items()}


def _placement(d: Mapping[str, Any]) -> PlacementData:
    jobs = {
        jid: PlacementJob(
            parameter_servers=int(j.get("parameter_servers", 0)),
            worker=_floats(j.get("worker")),
            ps=_floats(j.get("ps")),
            standalone_speed=None
            if j.get("standalone_speed") is None
            else float(j["standalone_speed"]),
            placed=None
            if j.get("placed") is None
            else {s: PlacedTasks(**c) for s, c in j["placed"].items()},
        )
        for jid, j in d.get("jobs", {}).items()
    }
    return PlacementData(
        servers={s: _floats(c) or {} for s, c in d.get("servers", {}).items()},
        jobs=jobs,
        interference={m: _floats(row) or {} for m, row in d.get("interference", {}).items()},
        communication=_floats(d.get("communication")) or {},
        min_speed_fraction=None
        if d.get("min_speed_fraction") is None
        else float(d["min_speed_fraction"]),
    )


def extensions_of(metadata: Mapping[str, Any]) -> Extensions:
    """The typed extensions of metadata that :data:`SCHEMAS` has already checked."""
    hadar, packing, sim = (metadata.get(k) for k in ("hadar", "packing", "similarity"))
    hlas, hlas_p, placement = (metadata.get(k) for k in ("hlas", "hlas_p", "placement"))
    return Extensions(
        hadar=None if hadar is None else HadarOptions(**hadar),
        packing=None
        if packing is None
        else PackingRound(dict(packing["scheduled"]), packing.get("metric", "normalized")),
        similarity=None if sim is None else SimilarityOptions(**sim),
        gang=None if metadata.get("gang") is None else GangOptions(**metadata["gang"]),
        hlas=None
        if hlas is None and hlas_p is None
        else HlasOptions(
            thresholds=None
            if (hlas or {}).get("thresholds") is None
            else tuple(sorted(float(x) for x in hlas["thresholds"])),
            min_rounds=dict((hlas_p or {}).get("min_rounds", {})),
        ),
        placement=None if placement is None else _placement(placement),
    )
