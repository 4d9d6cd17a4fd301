"""Gavel's data files (``data/gavel/`` in this repository, copied with their MIT licence and
provenance from ``../shared/data/gavel/``; read its README) into our instance format.

* The throughput table ``simulation_throughputs.json``: worker type -> job type key
  ``"('<model> (batch size B)', scale_factor)"`` -> ``{"null": isolated steps/s of the whole job,
  other key: [a, b] co-located pair throughputs}``.
* Traces: the 10-field ``physical_cluster`` format (job_type, command, working_directory,
  num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time)
  and the older 7-field format (job_type, command, num_steps_arg, needs_data_dir, total_steps,
  arrival_time, scale_factor). Tabs separate fields.

Mapping to a job (documented assumptions): ``throughput[type]`` is the table's isolated
throughput for (job type, scale factor); ``requested_workers`` = scale factor; the steps left are
``epochs = 1`` x ``iterations_per_epoch = total_steps``; ``weight`` = priority weight (1 for the
7-field format); ``model`` = the job type with its batch size. Hare's fields view one step as a
round of ``scale_factor`` parallel tasks taking 1/throughput s each with no separate sync; a
type where the table's throughput is 0 (the job cannot run there, e.g. ResNet-50 bs 128 on K80 at
scale > 1) gets throughput 0 and a Hare train time of ``NEVER`` seconds, so no policy uses it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from hetsched.core.errors import InputError
from hetsched.core.resources import resolve_file, shipped
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server

KEY = re.compile(r"\('(.*)', (\d+)\)")
BATCH = re.compile(r"\(batch size (\d+)\)")
NEVER = 1e9  # Hare train time (s) standing for "cannot run on this type"
#: On-demand prices ($/GPU-hour) Gavel's cost policies used (AWS p3, p2 and GCP P100, 2020).
GAVEL_COST = {"v100": 3.06, "p100": 1.46, "k80": 0.9}


ROW = re.compile(r"(.*?)(?: \(batch size (\d+)\))?$")


def parse_row(name: str) -> tuple[str, int]:
    """A row of the table by its model family and batch size: 'ResNet-50 (batch size 64)' ->
    ('ResNet-50', 64); rows without a batch size get 1."""
    m = ROW.fullmatch(name)
    return m.group(1), int(m.group(2) or 1)


@dataclass(frozen=True)
class ThroughputTable:
    """isolated[type][(model, scale)] and pairs[type][(model, scale)][(model2, scale2)] = (a, b)."""

    isolated: dict[str, dict[tuple[str, int], float]]
    pairs: dict[str, dict[tuple[str, int], dict[tuple[str, int], tuple[float, float]]]]

    def throughput(self, worker_type: str, model: str, scale: int, source: str = "") -> float:
        try:
            return self.isolated[worker_type][(model, scale)]
        except KeyError:
            raise InputError(
                source or "throughputs",
                f"$['{worker_type}']",
                f"no throughput for ('{model}', {scale})",
            ) from None


def _key(text: str, source: str, path: str) -> tuple[str, int]:
    m = KEY.fullmatch(text)
    if not m:
        raise InputError(
            source, path, f"job type key {text!r} is not \"('<model>', <scale factor>)\""
        )
    return m.group(1), int(m.group(2))


def load_throughputs(path: str | Path | None = None) -> ThroughputTable:
    """Gavel's throughput table from ``path``; None: the copy shipped with hetsched."""
    if path is None:
        path = shipped("data", "gavel", "simulation_throughputs.json")
        source = Path(path).name
    else:
        source = str(path)  # the file as the caller gave it
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(source, "$", f"cannot read: {exc}") from None
    isolated: dict = {}
    pairs: dict = {}
    for wtype, jobs in data.items():
        isolated[wtype], pairs[wtype] = {}, {}
        for key, entry in jobs.items():
            k = _key(key, source, f"$['{wtype}']")
            if "null" not in entry:
                raise InputError(
                    source, f"$['{wtype}']['{key}']", 'missing the isolated throughput "null"'
                )
            isolated[wtype][k] = float(entry["null"])
            pairs[wtype][k] = {
                _key(other, source, f"$['{wtype}']['{key}']"): (float(v[0]), float(v[1]))
                for other, v in entry.items()
                if other != "null"
            }
    return ThroughputTable(isolated, pairs)


def parse_cluster(spec: str) -> dict[str, int]:
    """``"v100=4,p100=4,k80=4"`` -> counts."""
    out = {}
    for part in spec.split(","):
        name, _, count = part.partition("=")
        if not name or not count.isdigit() or int(count) < 1:
            raise InputError(
                "--cluster", part, "expected TYPE=COUNT with COUNT >= 1, e.g. v100=4,p100=4,k80=4"
            )
        out[name.strip()] = int(count)
    return out


def shipped_trace(path: str | Path) -> Path:
    """``path`` itself, or the shipped Gavel trace it names (``gavel-trace:NAME``, ``NAME``,
    ``NAME.trace``, ``data/gavel/traces/NAME.trace``): :func:`~hetsched.core.resources.resolve_file`."""
    return resolve_file(str(path).removeprefix("gavel-trace:"), "data", ".trace", "Gavel trace")


def load_trace(
    path: str | Path,
    table: ThroughputTable,
    cluster: dict[str, int],
    name: str | None = None,
    gpus_per_server: int = 4,
) -> Instance:
    """A Gavel trace file as an instance; a bare name (``physical_cluster_max_min_fairness``) that is
    not a file here is one of the traces shipped in ``data/gavel/traces/``."""
    source = str(path)  # as the caller gave it (a bare name of a shipped trace stays bare)
    path = shipped_trace(path)
    types = sorted(cluster)
    for t in types:
        if t not in table.isolated:
            raise InputError(
                "--cluster",
                t,
                f"no such worker type in the throughput table ({', '.join(table.isolated)})",
            )
    gpus = [Gpu(f"{t}-{i}", t, "") for t in types for i in range(cluster[t])]
    servers = tuple(
        Server(f"s{k}", tuple(Gpu(g.id, g.type, f"s{k}") for g in gpus[i : i + gpus_per_server]))
        for k, i in enumerate(range(0, len(gpus), gpus_per_server))
    )
    jobs = []
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            source, "$", f"cannot read the trace: {exc.__class__.__name__}: {exc}"
        ) from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        f = line.split("\t")
        where = f"line {lineno}"
        try:
            if len(f) == 10:
                job_type, steps, scale, weight, arrival = (
                    f[0],
                    int(f[5]),
                    int(f[6]),
                    float(f[7]),
                    float(f[9]),
                )
            elif len(f) == 7:
                job_type, steps, arrival, scale, weight = (
                    f[0],
                    int(f[4]),
                    float(f[5]),
                    int(f[6]),
                    1.0,
                )
            else:
                raise InputError(source, where, f"{len(f)} tab-separated fields; expected 10 or 7")
        except ValueError as exc:
            raise InputError(source, where, f"bad number: {exc}") from None
        thr = {t: table.throughput(t, job_type, scale, source=f"{source} {where}") for t in types}
        if steps < 1 or not any(v > 0 for v in thr.values()):
            raise InputError(
                source, where, "needs total_steps >= 1 and a positive throughput on some type"
            )
        batch = BATCH.search(job_type)
        jobs.append(
            Job(
                id=f"J{len(jobs)}",
                arrival=arrival,
                weight=weight if weight > 0 else 1.0,
                rounds=steps,
                tasks_per_round=scale,
                train_time={t: 1.0 / v if v > 0 else NEVER for t, v in thr.items()},
                sync_time={t: 0.0 for t in types},
                requested_workers=scale,
                epochs=1.0,
                iterations_per_epoch=steps,
                throughput=thr,
                model=ModelInfo(name=job_type, batch_size=int(batch.group(1)) if batch else None),
            )
        )
    if not jobs:
        raise InputError(source, "$", "no jobs in the trace")
    gtypes = {t: GpuType(t, cost_per_hour=GAVEL_COST.get(t)) for t in types}
    return Instance(
        name or Path(path).stem,
        Cluster(gtypes, servers),
        tuple(jobs),
        description=f"Gavel trace {source} on {', '.join(f'{cluster[t]} {t}' for t in types)}; "
        "see hetsched.instance.gavel_table for the mapping",
        metadata={"source": str(source), "format": "gavel-trace"},
    )
