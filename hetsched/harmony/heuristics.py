"""Placement heuristics for one interval (Harmony, ToN'22): the baselines of Sec. VII.B and the
exploration policies of Sec. V.B, and a greedy that ranks a job's placements with a reward model
(the true speed model or a learned predictor, Sec. VI).

Task by task, parameter servers first, in job (arrival) order; a job whose tasks do not all fit
waits, leaving nothing behind:

* ``load-balancing`` (LB, as in Mesos/Kubernetes): the feasible server with the least load, the
  sum over resources of used / capacity (Sec. VII.B: "We normalize the usage of resources ... and
  sum them as the load of a server").
* ``bin-packing``: the feasible server with the least capacity left, sum of free / capacity
  (Sec. V.B's description of the bin-packing exploration policy; Borg-style best fit).
* ``tetris``: multi-resource packing by Tetris's alignment score, the feasible server maximizing
  sum_k (demand_k / cap_k) * (free_k / cap_k) (Grandl et al., SIGCOMM'14; Harmony's baseline).
* ``standalone``: only servers no other job uses (Sec. III, Case study 1), the job's own servers
  first, then the fullest; no co-location at all.

Ties go to the lowest server index. ``greedy_by_reward``: for each job in order, every
distribution of its workers and parameter servers over the servers (or, above
``max_candidates``, the placements the rules above give for it and each single-server
consolidation) is scored by the reward of eq. (1) under the given speed model, counting the
jobs placed so far; the best is kept. Like Harmony's agent it places a job whenever it fits.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from math import comb
from typing import Callable

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.harmony.evaluate import candidate_rewards, speed_fractions
from hetsched.harmony.problem import Placement
from hetsched.harmony.view import EPS, PlacementView

RULES = ("load-balancing", "bin-packing", "tetris", "standalone")
SpeedModel = Callable[
    [PlacementView, np.ndarray], np.ndarray
]  # (view, tasks[n, s]) -> speed fractions


class _State:
    """Resources in use and task counts; the earlier jobs' placement included."""

    def __init__(self, view: PlacementView) -> None:
        self.view = view
        self.used = view.fixed_usage().copy()
        self.xw = np.zeros((view.n_jobs, view.n_servers), dtype=int)
        self.xp = np.zeros_like(self.xw)

    def tasks(self) -> np.ndarray:
        return self.view.fixed_workers + self.view.fixed_ps + self.xw + self.xp

    def fits(self, demand: np.ndarray, n: int) -> np.ndarray:
        """Servers where one more task of job n with this demand fits (and n may run)."""
        ok = (self.used + demand <= self.view.capacity + EPS).all(axis=1)
        return ok if self.view.allowed is None else ok & self.view.allowed[n]


def _score(rule: str, st: _State, n: int, demand: np.ndarray) -> np.ndarray:
    """Lower is better."""
    cap = st.view.capacity
    norm = np.where(cap > 0, 1.0 / np.where(cap > 0, cap, 1.0), 0.0)
    if rule == "load-balancing":
        return (st.used * norm).sum(axis=1)
    free = ((cap - st.used) * norm).sum(axis=1)
    if rule == "bin-packing":
        return free
    if rule == "tetris":
        return -((demand * norm) * ((cap - st.used) * norm)).sum(axis=1)
    if rule == "standalone":
        tasks = st.tasks()
        others = (
            np.delete(tasks, n, axis=0).sum(axis=0)
            if st.view.n_jobs > 1
            else np.zeros(st.view.n_servers)
        )
        blocked = np.where(others > 0, np.inf, 0.0)
        return blocked + np.where(tasks[n] > 0, 0.0, 1e6) + free
    raise HetschedError(f"unknown placement rule '{rule}' (known: {', '.join(RULES)})")


def _place_job_by_rule(st: _State, n: int, rule: str) -> bool:
    v = st.view
    kinds = [("ps", v.ps_demand[n])] * int(v.parameter_servers[n]) + [
        ("worker", v.worker_demand[n])
    ] * int(v.workers[n])
    saved = (st.used.copy(), st.xw.copy(), st.xp.copy())
    for kind, demand in kinds:
        score = np.where(st.fits(demand, n), _score(rule, st, n, demand), np.inf)
        s = int(np.argmin(score))
        if not np.isfinite(score[s]):
            st.used, st.xw, st.xp = saved
            return False
        st.used[s] += demand
        (st.xp if kind == "ps" else st.xw)[n, s] += 1
    return True


def place_by_rule(view: PlacementView, rule: str) -> Placement:
    """Place the interval's new jobs in file order by ``rule`` (one of :data:`RULES`)."""
    if rule not in RULES:
        raise HetschedError(f"unknown placement rule '{rule}' (known: {', '.join(RULES)})")
    st = _State(view)
    for n in np.flatnonzero(view.new):
        _place_job_by_rule(st, int(n), rule)
    return Placement.from_arrays(view, st.xw, st.xp)


@lru_cache(maxsize=1024)
def distributions(count: int, n_servers: int) -> np.ndarray:
    """Every way of putting ``count`` identical tasks on ``n_servers`` servers, one row of counts
    per server each, in the order of ``itertools.combinations_with_replacement``. Read-only and
    remembered: a simulation asks for the same few (count, servers) pairs every round."""
    rows = list(itertools.combinations_with_replacement(range(n_servers), count))
    combos = np.array(rows, dtype=np.int64).reshape(len(rows), count)
    out = np.zeros((len(combos), n_servers), dtype=np.int64)
    np.add.at(out, (np.arange(len(combos))[:, None], combos), 1)
    out.setflags(write=False)
    return out


def n_distributions(view: PlacementView, n: int) -> int:
    S = view.n_servers
    return comb(int(view.workers[n]) + S - 1, S - 1) * comb(
        int(view.parameter_servers[n]) + S - 1, S - 1
    )


def job_candidates(
    view: PlacementView, n: int, st: _State | None = None, max_candidates: int = 5000
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Placements (workers per server, ps per server) of job n that fit next to ``st``: all of
    them up to ``max_candidates``, else the rules' placements and single-server consolidations."""
    w, p = candidate_arrays(view, n, st, max_candidates)
    return [(w[i].copy(), p[i].copy()) for i in range(len(w))]


def candidate_arrays(
    view: PlacementView, n: int, st: _State | None = None, max_candidates: int = 5000
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`job_candidates` as two arrays, one candidate a row (workers, ps per server)."""
    st = st or _State(view)
    free = view.capacity - st.used + EPS
    if n_distributions(view, n) <= max_candidates:  # every pair, workers' choice outermost
        ws = distributions(int(view.workers[n]), view.n_servers)
        ps = distributions(int(view.parameter_servers[n]), view.n_servers)
        w, p = np.repeat(ws, len(ps), axis=0), np.tile(ps, (len(ws), 1))
    else:
        found = []
        for rule in RULES:
            trial = _State(view)
            trial.used, trial.xw, trial.xp = st.used.copy(), st.xw.copy(), st.xp.copy()
            if _place_job_by_rule(trial, n, rule):
                found.append((tuple(trial.xw[n] - st.xw[n]), tuple(trial.xp[n] - st.xp[n])))
        for s in range(view.n_servers):
            alone_w, alone_p = [0] * view.n_servers, [0] * view.n_servers
            alone_w[s], alone_p[s] = int(view.workers[n]), int(view.parameter_servers[n])
            found.append((tuple(alone_w), tuple(alone_p)))
        w, p = _unique_pairs(found)
    # what each candidate needs of each server's resources, all at once: (candidates, S, R)
    need = (
        w[:, :, None] * view.worker_demand[n][None, None, :]
        + p[:, :, None] * view.ps_demand[n][None, None, :]
    )
    fit = (need <= free[None]).all(axis=(1, 2))
    if view.allowed is not None:
        fit &= ~((w + p) > 0)[:, ~view.allowed[n]].any(axis=1)
    return w[fit], p[fit]


def _unique_pairs(pairs: list[tuple[tuple, tuple]]) -> tuple[np.ndarray, np.ndarray]:
    """The (workers, ps) pairs without repeats, first occurrences in order, as two arrays."""
    kept = list(dict.fromkeys(pairs))
    return np.array([w for w, _ in kept], dtype=np.int64), np.array(
        [q for _, q in kept], dtype=np.int64
    )


def greedy_by_reward(
    view: PlacementView, speed_model: SpeedModel = speed_fractions, max_candidates: int = 5000
) -> Placement:
    """Each new job in order takes the candidate placement of largest reward (eq. (1)) under
    ``speed_model``, counting the jobs placed so far; a job waits only if nothing fits."""
    st = _State(view)
    weight = view.weight()
    placed = ~view.new.copy()
    for n in np.flatnonzero(view.new):
        base = st.tasks()
        best, best_value = None, -np.inf
        placed[n] = True
        ws, ps = candidate_arrays(view, int(n), st, max_candidates)
        if speed_model is speed_fractions:  # every candidate's reward at once
            values = candidate_rewards(view, base, int(n), ws + ps, placed).tolist()
        else:
            values = []
            for w, p in zip(ws, ps):
                tasks = base.copy()
                tasks[n] += w + p
                values.append(float(weight[placed] @ speed_model(view, tasks)[placed]))
        for i, value in enumerate(values):
            if value > best_value + 1e-12:
                best, best_value = (ws[i].copy(), ps[i].copy()), value
        if best is None:
            placed[n] = False
            continue
        st.xw[n], st.xp[n] = best
        st.used += np.outer(best[0], view.worker_demand[n]) + np.outer(best[1], view.ps_demand[n])
    return Placement.from_arrays(view, st.xw, st.xp)
