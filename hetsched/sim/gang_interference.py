"""Harmony's server-level speed model (ToN'22, Secs. III-IV; :mod:`hetsched.harmony.problem`)
in the gang simulator, for workloads that carry ``metadata.placement``.

Job n has W_n workers, one GPU each, and P_n parameter servers (no GPU); every task takes CPU
cores and bandwidth on its server (per-task demands, server capacities). With u_{n,s} = 1 when
job n has a task on server s during a round,

    slow_n = max_s u_{n,s} sum_{j != n} I[n, j] u_{j,s},   comm_n = kappa_n (sum_s u_{n,s} - 1),

and the job trains at b_n max(f_min, 1 - slow_n - comm_n) epochs per interval (b_n: its
standalone speed, epochs per Harmony interval, ``placement.data.INTERVAL_SECONDS``). As in Harmony's
evaluation, the speed is set at each round boundary by the round's placement and stays constant
inside the round: a job that completes mid-round still counts as a neighbour until the boundary
(its GPUs are given back there anyway). The engine applies the factor to each job's rate, its
plan check refuses a round whose tasks exceed a server's CPU or bandwidth, and the validator
recomputes both from the segments (their GPUs and parameter-server servers).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from hetsched.core.errors import HetschedError, InputError
from hetsched.instance.model import Instance

EPS = 1e-9


@dataclass(frozen=True)
class Interference:
    """The speed model's data over the whole workload (module doc); jobs by index."""

    model_of: tuple[int, ...]  # job -> its model's index in ``table``
    table: np.ndarray  # [a, b]: slowdown of a job of model a per co-located job of model b
    communication: np.ndarray  # kappa_n
    min_speed_fraction: float
    parameter_servers: np.ndarray  # P_n
    resources: tuple[str, ...]  # the resources checked per server (not the GPUs)
    worker_demand: np.ndarray  # [n, k]
    ps_demand: np.ndarray  # [n, k]
    capacity: np.ndarray  # [server, k]
    speed: np.ndarray  # b_n, epochs per interval
    epochs: np.ndarray  # e_n

    def factors(self, servers: dict[int, set[int]]) -> dict[int, float]:
        """max(f_min, 1 - slow_n - comm_n) of every job of the round, from the servers each has
        a task on (module doc)."""
        on: dict[int, list[int]] = defaultdict(list)
        for j, where in servers.items():
            for s in where:
                on[s].append(j)
        out = {}
        for j, where in servers.items():
            row = self.table[self.model_of[j]]
            slow = max(
                (sum(row[self.model_of[k]] for k in on[s] if k != j) for s in where), default=0.0
            )
            comm = self.communication[j] * (len(where) - 1)
            out[j] = max(self.min_speed_fraction, 1.0 - slow - comm)
        return out

    def usage(self, tasks: dict[int, tuple[list[int], list[int]]]) -> np.ndarray:
        """[server, resource] the round's tasks take; ``tasks``: job -> (the server of each
        worker, the server of each parameter server)."""
        used = np.zeros_like(self.capacity)
        for j, (workers, ps) in tasks.items():
            for s in workers:
                used[s] += self.worker_demand[j]
            for s in ps:
                used[s] += self.ps_demand[j]
        return used

    def overload(self, tasks: dict[int, tuple[list[int], list[int]]]) -> tuple[int, int] | None:
        """(server, resource) of the first capacity the round's tasks exceed, or None."""
        over = np.argwhere(self.usage(tasks) > self.capacity + EPS)
        return (int(over[0][0]), int(over[0][1])) if len(over) else None


def default_ps(
    model: Interference, j: int, tasks: dict[int, tuple[list[int], list[int]]]
) -> list[int] | None:
    """Where a plan that does not place job j's parameter servers has them go: each on the
    first server that still has room for it (``tasks``: the round's tasks so far, job -> (worker
    servers, parameter-server servers)), the job's workers' servers first, then the others by
    most free bandwidth; None if one has no room anywhere. A policy that knows better places
    them in its plan."""
    used = model.usage(tasks)
    own = list(dict.fromkeys(tasks[j][0]))
    free = model.capacity - used
    others = sorted(
        (h for h in range(len(model.capacity)) if h not in own), key=lambda h: (-free[h, -1], h)
    )
    out = []
    for _ in range(int(model.parameter_servers[j])):
        fits = [
            h
            for h in own + others
            if np.all(used[h] + model.ps_demand[j] <= model.capacity[h] + EPS)
        ]
        if not fits:
            return None
        h = fits[0]
        used[h] += model.ps_demand[j]
        out.append(h)
    return out


def round_speeds(plan: dict, given: dict, data, model: Interference | None, policy: str, t: float):
    """On Harmony's workloads: (each job's speed factor this round, the servers of its
    parameter servers), after checking them and every server's CPU and bandwidth; the
    parameter servers a plan leaves out go where :func:`default_ps` puts them, and a job whose
    parameter servers fit nowhere is taken out of ``plan``: it waits, as a cluster manager
    keeps a job pending whose tasks it cannot host. Elsewhere ({}, {})."""
    if model is None:
        return {}, {}
    tasks = {
        j: ([data.server_of[g] for g in gpus], list(given.get(j, ()))) for j, gpus in plan.items()
    }
    for j in list(plan):
        if j not in given:
            where = default_ps(model, j, tasks)
            if where is None:  # no room for its parameter servers: the job waits this round
                del tasks[j], plan[j]
                continue
            tasks[j][1].extend(where)
        mine = tasks[j][1]
        if len(mine) != model.parameter_servers[j] or any(
            not 0 <= h < len(data.servers) for h in mine
        ):
            raise HetschedError(
                f"policy {policy} gave {data.job_ids[j]} {len(mine)} parameter servers "
                f"(it has {model.parameter_servers[j]}) or an unknown server"
            )
    over = model.overload(tasks)
    if over is not None:
        raise HetschedError(
            f"policy {policy} exceeds the {model.resources[over[1]]} of server "
            f"{data.servers[over[0]]} at t={t}"
        )
    factor = model.factors({j: set(w) | set(p) for j, (w, p) in tasks.items()})
    # a job's parameter servers are interchangeable shards: which server hosts which is no
    # move, so they are kept in server order (the validator compares them as a multiset too)
    return factor, {j: tuple(sorted(p)) for j, (_, p) in tasks.items() if p}


def interference_of(instance: Instance) -> Interference | None:
    """The speed model of a workload with ``metadata.placement`` (None without); errors name the
    field: the gang simulator runs each worker on exactly one GPU, a parameter server on none."""
    meta = instance.extensions.placement
    if meta is None:
        return None
    from hetsched.harmony.problem import placement_view, speed_tables

    view = placement_view(instance)
    gpu = view.resources.index("gpu")
    for n, jid in enumerate(view.job_ids):
        for what, demand, want in (("worker", view.worker_demand, 1.0), ("ps", view.ps_demand, 0)):
            if demand[n, gpu] != want:
                raise InputError(
                    instance.name,
                    f"$.metadata.placement.jobs.{jid}.{what}.gpu",
                    f"the gang simulator runs a {'worker on one GPU' if want else 'parameter server on none'}"
                    f" (got {demand[n, gpu]:g})",
                )
    _refuse_jobs_that_fit_nowhere(instance, view)
    inter, comm, fmin = speed_tables(meta)
    models = sorted(set(view.models))
    table = np.array([[inter.get(a, {}).get(b, 0.0) for b in models] for a in models])
    keep = [k for k in range(len(view.resources)) if k != gpu]
    return Interference(
        model_of=tuple(models.index(m) for m in view.models),
        table=table,
        communication=np.array([comm[m] for m in view.models], dtype=float),
        min_speed_fraction=float(fmin),
        parameter_servers=view.parameter_servers.astype(int),
        resources=tuple(view.resources[k] for k in keep),
        worker_demand=view.worker_demand[:, keep],
        ps_demand=view.ps_demand[:, keep],
        capacity=view.capacity[:, keep],
        speed=view.standalone_speed.astype(float),
        epochs=view.epochs.astype(float),
    )


def _refuse_jobs_that_fit_nowhere(instance: Instance, view) -> None:
    """A job whose tasks do not fit on the empty cluster would wait for ever: refused, naming
    it (once per distinct job shape: workers, parameter servers, their demands)."""
    from hetsched.harmony.fits import fits_on_empty_cluster

    seen: dict[tuple, bool | None] = {}
    for n, jid in enumerate(view.job_ids):
        w, p = int(view.workers[n]), int(view.parameter_servers[n])
        key = (w, p, tuple(view.worker_demand[n]), tuple(view.ps_demand[n]))
        if key not in seen:
            seen[key] = fits_on_empty_cluster(
                view.worker_demand[n], w, view.ps_demand[n], p, view.capacity
            )
        if seen[key] is False:
            raise InputError(
                instance.name,
                f"$.metadata.placement.jobs.{jid}",
                f"its {w} worker(s) and {p} parameter server(s) fit on no server of the "
                f"cluster, even empty ({', '.join(view.resources)} per server): it could never run",
            )
