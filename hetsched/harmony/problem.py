"""Interference-aware job placement in one scheduling interval (Harmony, ToN'22, Secs. IV-V).

Servers have capacities of K resources (GPUs, CPU cores, bandwidth). Job n asks for W_n
workers and P_n parameter servers (P_n = 0 for all-reduce), each with a demand vector. Jobs
placed in earlier intervals keep their placement ("no placement adjustment after deployment",
Sec. IV); the interval's new jobs are placed whole or wait (a job needs all its tasks).

**Speed model** (the "environment" that Harmony learns as a black box; ours is explicit so
that placements can be optimized exactly and predictors trained on its samples). With
u_{n,s} = 1 when job n has a task on server s:

    slow_n = max_s u_{n,s} * sum_{j != n} I[n, j] u_{j,s}   interference: the synchronous job runs
                                                           at the pace of its worst-hit server
    comm_n = kappa_n * (sum_s u_{n,s} - 1)                  communication across servers
    c_n    = b_n * max(f_min, 1 - slow_n - comm_n)          epochs per interval (0 if not placed)

with I[n, j] the pairwise slowdown of n's model by j's model, kappa_n the loss per extra
server, b_n the standalone speed, f_min a floor. The reward of the interval is Harmony's
eq. (1), r = sum_n c_n / e_n over every concurrent job, old and new.

The instance carries the problem in ``metadata.placement`` (see :func:`placement_view`);
a job's worker count is ``requested_workers``, its total epochs ``epochs``, its model ``model.name``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from hetsched.core.errors import InputError, expect_format
from hetsched.core.reports import ValidationReport, Violation
from hetsched.harmony import data
from hetsched.harmony.view import EPS, PlacementView
from hetsched.instance.extensions import RESOURCES, PlacementJob
from hetsched.instance.model import Instance

FORMAT = "hetsched.harmony/1"


@dataclass(frozen=True)
class Placement:
    """Where the interval's new jobs go: job id -> server id -> (workers, parameter servers).
    A new job absent from the map waits."""

    jobs: Mapping[str, Mapping[str, tuple[int, int]]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "placement": {
                j: {s: {"workers": w, "parameter_servers": p} for s, (w, p) in on.items()}
                for j, on in self.jobs.items()
            },
        }

    @staticmethod
    def from_arrays(view: PlacementView, xw: np.ndarray, xp: np.ndarray) -> "Placement":
        out: dict[str, dict[str, tuple[int, int]]] = {}
        for n in np.flatnonzero(view.new):
            on = {
                view.server_ids[s]: (int(xw[n, s]), int(xp[n, s]))
                for s in range(view.n_servers)
                if xw[n, s] + xp[n, s] > 0
            }
            if on:
                out[view.job_ids[n]] = on
        return Placement(out)

    def to_arrays(
        self, view: PlacementView, source: str = "<placement>"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Counts of the new jobs' tasks, [n, s] (earlier jobs not included)."""
        xw = np.zeros((view.n_jobs, view.n_servers), dtype=int)
        xp = np.zeros_like(xw)
        jobs, servers = (
            {j: n for n, j in enumerate(view.job_ids)},
            {s: k for k, s in enumerate(view.server_ids)},
        )
        for jid, on in self.jobs.items():
            if jid not in jobs:
                raise InputError(source, f"$.placement.{jid}", "unknown job")
            for sid, (w, p) in on.items():
                if sid not in servers:
                    raise InputError(source, f"$.placement.{jid}.{sid}", "unknown server")
                xw[jobs[jid], servers[sid]] += w
                xp[jobs[jid], servers[sid]] += p
        return xw, xp


def placement_from_dict(d: Any, source: str = "<placement>") -> Placement:
    d = expect_format(d, FORMAT, source)
    jobs = d.get("placement")
    if not isinstance(jobs, dict):
        raise InputError(source, "$.placement", "missing: a map job id -> server id -> counts")
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for jid, on in jobs.items():
        if not isinstance(on, dict):
            raise InputError(source, f"$.placement.{jid}", "must be a map server id -> counts")
        out[jid] = {}
        for sid, c in on.items():
            where = f"$.placement.{jid}.{sid}"
            w, p = (
                (c.get("workers", 0), c.get("parameter_servers", 0))
                if isinstance(c, dict)
                else (None, None)
            )
            if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (w, p)):
                raise InputError(
                    source,
                    where,
                    f"workers and parameter_servers must be integers >= 0 (got {c!r})",
                )
            out[jid][sid] = (w, p)
    return Placement(out)


def _vector(given: Mapping[str, float] | None, default: Mapping[str, float]) -> list[float]:
    """An amount per resource: the given ones, the default for the others."""
    given = given or {}
    return [float(given.get(r, default[r])) for r in RESOURCES]


def speed_tables(meta) -> tuple[dict[str, dict[str, float]], dict[str, float], float]:
    """The speed model's coefficients (module doc): I by model pair, kappa by model and f_min,
    :mod:`hetsched.harmony.data`'s defaults overridden by ``metadata.placement``."""
    inter = {m: dict(row) for m, row in data.INTERFERENCE.items()}
    for m, row in meta.interference.items():
        inter.setdefault(m, {}).update(row)
    comm = {**data.COMMUNICATION, **meta.communication}
    fmin = data.MIN_SPEED_FRACTION if meta.min_speed_fraction is None else meta.min_speed_fraction
    return inter, comm, fmin


def placement_view(instance: Instance) -> PlacementView:
    """Read the problem from ``metadata.placement``; every error names its field.

    ``metadata.placement``: ``servers`` {server id: {cpu, bandwidth}} (GPUs are the server's GPUs;
    defaults: Harmony's testbed server), ``jobs`` {job id: {parameter_servers, worker, ps,
    standalone_speed, placed}} (``worker``/``ps`` demand maps default to the model's in
    :mod:`hetsched.harmony.data`; ``placed`` {server id: {workers, parameter_servers}} marks a
    job placed in an earlier interval), optional ``interference`` {model: {model: slowdown}},
    ``communication`` {model: loss per extra server}, ``min_speed_fraction``."""
    src = instance.name
    meta = instance.extensions.placement  # shapes, values and ids checked on construction
    if meta is None:
        raise InputError(
            src, "$.metadata.placement", "missing: the placement problem (servers, jobs)"
        )
    servers = [s.id for s in instance.cluster.servers]
    cap = []
    for s in instance.cluster.servers:
        vec = _vector(meta.servers.get(s.id), data.SERVER)
        vec[RESOURCES.index("gpu")] = float(len(s.gpus))
        cap.append(vec)
    ids = [j.id for j in instance.jobs]
    inter, comm, fmin = speed_tables(meta)

    n, S = len(ids), len(servers)
    models, W, P, wd, pd, e, b, new = [], [], [], [], [], [], [], []
    fw, fp = np.zeros((n, S), dtype=int), np.zeros((n, S), dtype=int)
    for k, job in enumerate(instance.jobs):
        jp = f"$.jobs[{k}]"
        mp = f"$.metadata.placement.jobs.{job.id}"
        jm = meta.jobs.get(job.id, PlacementJob())
        if job.model is None or not job.model.name:
            raise InputError(
                src, f"{jp}.model.name", "missing: the model decides demands and interference"
            )
        model = job.model.name
        if model not in inter or model not in comm:
            raise InputError(
                src,
                f"{jp}.model.name",
                f"no interference/communication data for model '{model}' "
                f"(known: {', '.join(sorted(set(inter) & set(comm)))}; or give it in $.metadata.placement)",
            )
        if job.requested_workers is None:
            raise InputError(src, f"{jp}.requested_workers", "missing: the job's workers")
        if job.epochs is None:
            raise InputError(src, f"{jp}.epochs", "missing: the job's total epochs e_n of eq. (1)")
        e.append(float(job.epochs))
        models.append(model)
        W.append(job.requested_workers)
        P.append(jm.parameter_servers)
        wd.append(_vector(jm.worker, data.WORKER.get(model, data.WORKER["resnet50"])))
        pd.append(
            _vector(jm.ps, data.PARAMETER_SERVER.get(model, data.PARAMETER_SERVER["resnet50"]))
        )
        speed = data.standalone_speed(jm.standalone_speed, model)
        if speed is None:
            raise InputError(src, f"{mp}.standalone_speed", "missing (no default for this model)")
        b.append(speed)
        new.append(jm.placed is None)
        if jm.placed is not None:
            for sid, c in jm.placed.items():
                fw[k, servers.index(sid)] = c.workers
                fp[k, servers.index(sid)] = c.parameter_servers
            if fw[k].sum() != W[-1] or fp[k].sum() != P[-1]:
                raise InputError(
                    src,
                    f"{mp}.placed",
                    f"places {fw[k].sum()} workers and {fp[k].sum()} parameter servers; "
                    f"the job has {W[-1]} and {P[-1]}",
                )
    I = np.array(
        [
            [0.0 if a == c else inter.get(models[a], {}).get(models[c], 0.0) for c in range(n)]
            for a in range(n)
        ]
    )
    view = PlacementView(
        tuple(ids),
        tuple(servers),
        RESOURCES,
        tuple(models),
        np.array(cap, dtype=float),
        np.array(W),
        np.array(P),
        np.array(wd, dtype=float).reshape(n, len(RESOURCES)),
        np.array(pd, dtype=float).reshape(n, len(RESOURCES)),
        np.array(e),
        np.array(b),
        np.array(new, dtype=bool),
        fw,
        fp,
        I,
        np.array([comm[m] for m in models]),
        fmin,
    )
    over = view.fixed_usage() - view.capacity
    if (over > EPS).any():
        s, k = np.argwhere(over > EPS)[0]
        raise InputError(
            src,
            f"$.metadata.placement.servers.{servers[s]}",
            f"the earlier jobs' {RESOURCES[k]} exceeds the capacity ({view.fixed_usage()[s, k]:g} > {view.capacity[s, k]:g})",
        )
    return view


def check_placement(instance: Instance, placement: Placement) -> ValidationReport:
    """Independent check of a placement and its reward (eq. (1)), recomputed from the definition
    in the module docstring: capacities, whole jobs only, earlier jobs untouched."""
    view = placement_view(instance)
    bad: list[Violation] = []
    jobs, servers = (
        {j: n for n, j in enumerate(view.job_ids)},
        {s: k for k, s in enumerate(view.server_ids)},
    )
    tasks: dict[
        tuple[int, int], list[int]
    ] = {}  # (job, server) -> [workers, ps], earlier jobs included
    for n in range(view.n_jobs):
        for s in range(view.n_servers):
            if view.fixed_workers[n, s] or view.fixed_ps[n, s]:
                tasks[(n, s)] = [int(view.fixed_workers[n, s]), int(view.fixed_ps[n, s])]
    for jid, on in placement.jobs.items():
        if jid not in jobs:
            bad.append(Violation("unknown_job", f"'{jid}' is not a job of the instance"))
            continue
        n = jobs[jid]
        if not view.new[n]:
            bad.append(
                Violation(
                    "moved", f"'{jid}' was placed in an earlier interval and cannot move (Sec. IV)"
                )
            )
            continue
        w = sum(c[0] for c in on.values())
        p = sum(c[1] for c in on.values())
        if (w, p) != (int(view.workers[n]), int(view.parameter_servers[n])) and (w or p):
            bad.append(
                Violation(
                    "partial_job",
                    f"'{jid}' has {w} workers and {p} parameter servers placed; "
                    f"it needs {view.workers[n]} and {view.parameter_servers[n]}",
                )
            )
        for sid, (cw, cp) in on.items():
            if sid not in servers:
                bad.append(
                    Violation("unknown_server", f"'{jid}' is placed on unknown server '{sid}'")
                )
                continue
            if cw or cp:
                cell = tasks.setdefault((n, servers[sid]), [0, 0])
                cell[0] += cw
                cell[1] += cp
    for s in range(view.n_servers):
        for k, res in enumerate(view.resources):
            used = sum(
                c[0] * view.worker_demand[n, k] + c[1] * view.ps_demand[n, k]
                for (n, ss), c in tasks.items()
                if ss == s
            )
            if used > view.capacity[s, k] + EPS:
                bad.append(
                    Violation(
                        "capacity",
                        f"server '{view.server_ids[s]}': {res} {used:g} > capacity {view.capacity[s, k]:g}",
                    )
                )
    if bad:
        return ValidationReport(False, None, {}, bad)
    on_server = {n: {s for (nn, s) in tasks if nn == n} for n in range(view.n_jobs)}
    reward, speeds = 0.0, {}
    for n in range(view.n_jobs):
        if not on_server[n]:
            speeds[view.job_ids[n]] = 0.0
            continue
        slow = max(
            sum(view.interference[n, j] for j in range(view.n_jobs) if j != n and s in on_server[j])
            for s in on_server[n]
        )
        comm = view.communication[n] * (len(on_server[n]) - 1)
        c = view.standalone_speed[n] * max(view.min_speed_fraction, 1.0 - slow - comm)
        speeds[view.job_ids[n]] = c
        reward += c / view.epochs[n]
    return ValidationReport(True, reward, speeds, [])
