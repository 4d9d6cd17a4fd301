"""Harmony's placement (ToN'22, Secs. IV-V and VII.B) as a gang-engine policy, so that it runs
beside Gavel, Tiresias, Hadar and the similarity policy on the same workloads (issue 19).

Harmony places each interval's new jobs next to the running ones, which never move ("no
placement adjustment after deployment", Sec. IV); a job is placed whole or waits. Here an
interval is a round of the engine, and every round the waiting jobs, in arrival order, are
placed by one of :mod:`hetsched.harmony`'s methods on a :class:`PlacementView` of the cluster:

* ``harmony:load-balancing``, ``:bin-packing``, ``:tetris``, ``:standalone``: the rules of
  :func:`hetsched.harmony.heuristics.place_by_rule`;
* ``harmony:greedy`` (also ``harmony-greedy``, the default): the greedy by reward (eq. (1));
* ``harmony:greedy-learned``: the same greedy with the learned interference predictor;
* ``harmony:exact``: the round's optimal placement of every waiting job at once
  (:func:`hetsched.harmony.separable.separable_placement`, an integer program: exact here
  because nothing interferes).

On Harmony's own workloads (``metadata.placement``, e.g. ``harmony-jobs``), the engine applies
Harmony's speed model (interference, communication, parameter servers, CPU and bandwidth:
:mod:`hetsched.sim.gang_interference`), and the methods run on each interval's full placement
problem instead (:meth:`Harmony._interval`): every waiting job is offered at once, in arrival
order or, with ``harmony:METHOD:reward``, by largest reward weight b_n / e_n first; ``exact``
solves the interval's MILP ``harmony-placement`` (``harmony:exact:ORDER:SECONDS``: its time
limit per interval, default 10 s).

The view: one "server" per (server, GPU type) group of the cluster, with its GPUs as the only
resource; a job has s_j workers of one GPU each and no parameter server; its epochs e_n are its
work W_j and its standalone speed b_n its best rate over a round, on a group of type r it runs
at X_j^r / max_r X_j^r of that (``server_speed``) and only where X_j^r > 0 (``allowed``). The gang
model has no co-location interference nor a cost for spanning servers (its GPUs are exclusive
and a gang runs at its slowest type's pace), so both are zero and the reward the greedy
maximizes is the one the engine then delivers. The learned predictor only knows Harmony's six
models: on a workload of other models, ``harmony:greedy-learned`` stops with an error naming
the job. The greedy and the exact method read each job's total work (Harmony's e_n, declared
at submission), so they count as clairvoyant.
"""

from __future__ import annotations

from itertools import islice
from typing import Iterator

import numpy as np

from hetsched.core.errors import HetschedError, InputError
from hetsched.harmony import data as harmony_data
from hetsched.harmony.methods import CLAIRVOYANT, ORDERS, check_method, heuristic
from hetsched.harmony.problem import PlacementView
from hetsched.harmony.separable import separable_placement
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_interference import interference_of
from hetsched.sim.gang_model import Run


class Harmony:
    ARGUMENT = "harmony:METHOD[:ORDER[:SECONDS]]"

    def __init__(self, method: str = "greedy", seed: int = 0):
        name = method
        method, _, rest = method.partition(":")
        order, _, seconds = rest.partition(":")
        self.method = check_method(method, "policy", self.ARGUMENT)
        self.order = order or "arrival"
        if self.order not in ORDERS:
            raise InputError("policy", self.ARGUMENT, f"ORDER is arrival or reward, not {order!r}")
        try:  # the exact method's time limit per interval (default 10 s)
            self.time_limit = float(seconds) if seconds else 10.0
        except ValueError:
            self.time_limit = -1.0
        if not (0 < self.time_limit < float("inf")) or (seconds and method != "exact"):
            raise InputError(
                "policy", self.ARGUMENT, f"SECONDS is a time limit > 0 of exact, not {seconds!r}"
            )
        self.name = f"harmony:{name}"
        self.clairvoyant = method in CLAIRVOYANT
        self.seed = seed

    def prepare(self, instance, jobs) -> None:
        d = self.data = jobs
        groups: dict[tuple[int, int], list[int]] = {}
        for g in range(d.n_gpus):
            groups.setdefault((int(d.gpu_server[g]), int(d.gpu_type[g])), []).append(g)
        self.groups = list(groups.values())
        self.group_ids = tuple(f"{d.servers[h]}/{d.types[r]}" for h, r in groups)
        gtype = np.array([r for _, r in groups])
        self.group_of = {g: k for k, gs in enumerate(self.groups) for g in gs}
        best = d.throughput.max(axis=1)
        self.speed = d.throughput[:, gtype] / best[:, None]  # [job, group]
        self.standalone = best  # units/s; times the round length in the view
        # the heuristic (and the learned predictor it may hold) is made once, not every round
        self._heuristic = None if self.method == "exact" else heuristic(self.method, self.seed)
        self.instance = instance
        self.interference = interference_of(instance)
        if self.interference is not None:  # Harmony's own workload: its speed model decides
            return
        if self.method == "greedy-learned":  # its predictor knows the models it was trained on
            from hetsched.harmony.predictor import default_predictor

            predictor = default_predictor(self.seed)
            for k, m in enumerate(d.models):
                if m not in predictor.models:
                    raise InputError(
                        instance.name,
                        f"$.jobs[{k}].model.name",
                        f"harmony:greedy-learned needs interference data for model {m!r}; the "
                        f"learned predictor knows {', '.join(predictor.models)} "
                        "(harmony:greedy uses the workload's own interference: none here)",
                    )

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...] | Run]:
        if self.interference is not None:
            return self._interval(state)
        plan = dict(state.held)  # placed jobs keep their GPUs until they complete
        taken = {g for gs in plan.values() for g in gs}
        free = [[g for g in gs if g not in taken] for gs in self.groups]
        for chunk in self._chunks(state, free):
            for j, counts in self._place(state, plan, chunk).items():
                gpus = []
                for k, c in enumerate(counts):
                    gpus += free[k][:c]
                    free[k] = free[k][c:]
                plan[j] = tuple(gpus)
        return plan

    def _chunks(self, state: GangState, free: list[list[int]]) -> Iterator[list[int]]:
        """The waiting jobs in arrival order, as many at a time as there are ``free`` GPUs (a job
        takes at least one; read again after each chunk is placed): each is placed or waits, as
        if all were placed in one pass; the optimum looks at every waiting job at once. One pass
        over the waiting jobs: a job passed over for a gang larger than the free GPUs stays too
        large, as free GPUs only get fewer."""
        gang = self.data.gang_sizes
        waiting = (j for j in state.active_in_order() if j not in state.held)
        while any(free):
            n_free = sum(len(f) for f in free)
            fits = (j for j in waiting if gang[j] <= n_free)
            chunk = list(fits) if self.method == "exact" else list(islice(fits, n_free))
            if not chunk:
                return
            yield chunk

    def _place(self, state, plan, new: list[int]) -> dict[int, np.ndarray]:
        """GPUs per group for each job of ``new`` placed this time (the rest wait)."""
        d = self.data
        rows = list(plan) + new
        n, S = len(rows), len(self.groups)
        group_of = self.group_of
        cells = [i * S + group_of[g] for i, j in enumerate(rows[: len(plan)]) for g in plan[j]]
        fixed = np.bincount(cells, minlength=n * S).reshape(n, S)  # GPUs per (job, group)
        view = PlacementView(
            job_ids=tuple(d.job_ids[j] for j in rows),
            server_ids=self.group_ids,
            resources=("gpu",),
            models=tuple(d.models[j] or d.job_ids[j] for j in rows),
            capacity=np.array([[float(len(gs))] for gs in self.groups]),
            workers=d.gang[rows],
            parameter_servers=np.zeros(n, dtype=int),
            worker_demand=np.ones((n, 1)),
            ps_demand=np.zeros((n, 1)),
            epochs=d.work[rows].astype(float),
            standalone_speed=self.standalone[rows] * state.round_seconds,
            new=np.array([i >= len(plan) for i in range(n)]),
            fixed_workers=fixed,
            fixed_ps=np.zeros_like(fixed),
            interference=np.zeros((n, n)),
            communication=np.zeros(n),
            min_speed_fraction=harmony_data.MIN_SPEED_FRACTION,
            allowed=self.speed[rows] > 0,
            server_speed=self.speed[rows],
        )
        placement = (
            separable_placement(view)[0]  # the servers' own speeds make eq. (1) separable
            if self._heuristic is None
            else self._heuristic(view)
        )
        xw, _ = placement.to_arrays(view)
        return {rows[i]: xw[i] for i in range(len(plan), n) if xw[i].sum() > 0}

    def _interval(self, state: GangState) -> dict[int, tuple[int, ...] | Run]:
        """Harmony's own setting (a workload with its speed model, ``metadata.placement``): the
        running jobs keep their tasks; every waiting job, in arrival order, is offered at once
        to the method on the interval's placement problem, as ``place-sim`` has always done."""
        from hetsched.harmony.generate import make_instance
        from hetsched.harmony.problem import check_placement, placement_view

        d, inst = self.data, self.instance
        held = {j: Run(g, None, state.held_ps.get(j, ())) for j, g in state.held.items()}
        waiting = [j for j in state.active() if j not in held]
        if not waiting:
            return dict(held)
        if self.order == "reward":  # largest reward weight b_n / e_n first (eq. (1))
            waiting.sort(key=lambda j: -self.interference.speed[j] / d.work[j])
        meta = inst.extensions.placement
        placed = {}
        for j, run in held.items():
            on: dict[str, dict[str, int]] = {}
            for g in run.gpus:
                c = on.setdefault(
                    d.servers[d.gpu_server[g]], {"workers": 0, "parameter_servers": 0}
                )
                c["workers"] += 1
            for h in run.ps:
                c = on.setdefault(d.servers[h], {"workers": 0, "parameter_servers": 0})
                c["parameter_servers"] += 1
            placed[d.job_ids[j]] = on
        batch = [
            {
                "id": d.job_ids[j],
                "model": d.models[j],
                "workers": int(d.gang[j]),
                "parameter_servers": int(self.interference.parameter_servers[j]),
                "epochs": float(d.work[j]),
                "arrival": float(d.arrival[j]),
            }
            for j in list(held) + waiting
        ]
        first = inst.cluster.servers[0]
        server = {"gpu": float(len(first.gpus)), **(meta.servers.get(first.id) or {})}
        interval = make_instance(
            f"{inst.name}-t{state.round}", len(d.servers), batch, placed, server=server
        )
        if self.method == "exact":
            from hetsched.exact.solve import solve

            res = solve(
                interval, "harmony-placement", "highs", time_limit=self.time_limit, threads=1
            )
            if res.solution is None:
                raise HetschedError(
                    f"{self.name}: the exact placement found none at t={state.now} "
                    f"({res.status.value})"
                )
            placement = res.solution
        else:
            placement = self._heuristic(placement_view(interval))
        report = check_placement(interval, placement)
        if not report.valid:
            raise HetschedError(
                f"{self.name}: invalid placement at t={state.now}: {report.violations[0].message}"
            )
        plan: dict[int, tuple[int, ...] | Run] = dict(held)
        taken = {g for run in held.values() for g in run.gpus}
        index = {jid: j for j, jid in enumerate(d.job_ids)}
        server_of = {s.id: h for h, s in enumerate(interval.cluster.servers)}
        for jid, on in placement.jobs.items():
            gpus, ps = [], []
            for sid, (w, p) in on.items():
                h = server_of[sid]
                free = [g for g in range(d.n_gpus) if d.gpu_server[g] == h and g not in taken]
                gpus += free[:w]
                taken.update(free[:w])
                ps += [h] * p
            plan[index[jid]] = Run(tuple(gpus), None, tuple(ps))
        return plan
