"""The steps of Hare's Lemma 3 (HPDC'22, (14)-(20)), replayed on one run of Algorithm 1.

Lemma 3 bounds the idle time delta(pi_m(j), m) before the j-th task on GPU m by alpha H. Its proof
looks at one idle period on m, between pi_m(j-1) and pi_m(j), and walks back from pi_m(j) through
the bottleneck tasks of its job's earlier rounds (the task whose end + sync released the next
round: (18)-(19)) to a task u(0) with

    (15)  x~_{u(0)} <= x~_{pi_m(j-1)} + T~^c_{pi_m(j-1)}     (u(0) started before the gap)
    (16)  H_{u(0)} >= H_{pi_m(j-1)}                         (u(0) comes after pi_m(j-1) in pi)

and then telescopes: each gap is bounded by alpha (H_{pi_m(j)} - H_{pi_m(j-1)}) (the step the sum
(20) needs; ``lemma3_telescope``), which follows from (15)-(17) only with (16). (15) holds for the chain built here: the walk stops at the first task that
waited for a GPU, and a task that waited started at min_m phi_m <= the end of the last task on m
placed before it. (16) is asserted, not proved, and can fail: u(0) may precede pi_m(j-1) in pi.

The repair (proofs/hare_lemma3.md) compares the gap with v, the last task on m placed *before*
u(0) in pi, instead of pi_m(j-1): phi_m was the end of v when u(0) was placed, so
x~_{u(0)} <= end(v) (15') and H_v <= H_{u(0)} (16') hold by construction, and

    delta(pi_m(j)) - delta(v) <= sum_{u in chain} (T^{c,max}_u + T^{s,max}_u)
                              <= alpha (H_{pi_m(j)} - H_{u(0)})                   (gap)

which telescopes to (14) by induction over pi. A chain that ends at a round-0 task started at its
arrival gives delta(pi_m(j)) <= a_n + sum <= alpha x^_{pi_m(j)} <= alpha H_{pi_m(j)} directly.

:func:`step_checks` reports each step as a worst LHS/RHS over all idle periods (> 1 fails).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hetsched.hare.algorithm1 import Alg1Run, alpha
from hetsched.hare.view import HareView


@dataclass(frozen=True)
class IdleGap:
    """One idle period on ``gpu``, ended by task ``task`` (indices into D, as in Alg1Run).

    ``prev`` is pi_m(j-1) (None when the task is the first on m) and ``free_at`` the end of its
    training (0 without it); ``chain`` the bottleneck tasks of
    the job's earlier rounds, oldest first, from u(0) to u(l); ``waited`` says whether u(0) waited
    for a GPU (False: it is a round-0 task started at its arrival); ``v`` the last task on m
    placed before u(0) in pi (None: m was empty then); ``paper_u0`` the latest chain task that
    started by the end of ``prev`` (the most favourable u(0) for (16); None if none did).
    """

    task: int
    gpu: int
    prev: int | None
    free_at: float
    chain: tuple[int, ...]
    waited: bool
    v: int | None
    paper_u0: int | None


def _replay(view: HareView, run: Alg1Run) -> tuple[np.ndarray, np.ndarray]:
    """Per task: min_m phi_m when it was placed, and the last task on each GPU at that moment
    (rows in D order; -1 = none)."""
    n_arr, _, _ = view.task_arrays
    phi = np.zeros(view.n_gpus)
    last = np.full(view.n_gpus, -1)
    phi_min = np.empty(len(run.order))
    last_at = np.empty((len(run.order), view.n_gpus), dtype=np.int64)
    for i in run.order.tolist():
        phi_min[i] = phi.min()
        last_at[i] = last
        m = int(run.gpu[i])
        phi[m] = run.start[i] + view.train[n_arr[i], m]
        last[m] = i
    return phi_min, last_at


def idle_gaps(view: HareView, run: Alg1Run) -> list[IdleGap]:
    """Every idle period of Algorithm 1's schedule (earliest-available rule), with its chain."""
    if run.rule != "earliest_available":
        raise ValueError("Lemma 3 is about the paper's rule, earliest_available")
    n_arr, r_arr, _ = view.task_arrays
    H = run.priority
    phi_min, last_at = _replay(view, run)
    end = run.start + view.cycle[n_arr, run.gpu]  # x~ + T~^c + T~^s: when a task releases its round
    train_end = run.start + view.train[n_arr, run.gpu]
    rounds = {}
    for i in range(len(n_arr)):
        rounds.setdefault((int(n_arr[i]), int(r_arr[i])), []).append(i)

    def bottleneck(i: int) -> int:
        """The task of i's previous round whose end released it; ties: the largest H."""
        tasks = rounds[(int(n_arr[i]), int(r_arr[i]) - 1)]
        t = max(end[k] for k in tasks)
        return max((k for k in tasks if end[k] == t), key=lambda k: (H[k], k))

    gaps = []
    for i in range(len(n_arr)):
        m = int(run.gpu[i])
        prev = int(last_at[i, m])
        free_at = train_end[prev] if prev >= 0 else 0.0
        if not run.start[i] > free_at:
            continue  # no idle time right before i
        chain = []
        u = i
        while True:  # i itself started at its available time: walk back while tasks did too
            if u != i:
                chain.append(u)
                if run.start[u] <= phi_min[u]:
                    waited = True
                    break
            if r_arr[u] == 0:
                waited = False
                break
            u = bottleneck(u)
        chain.reverse()
        u0 = chain[0] if chain else i
        v = int(last_at[u0, m]) if waited else -1
        started_before = [u for u in chain if run.start[u] <= free_at]
        gaps.append(
            IdleGap(
                task=i,
                gpu=m,
                prev=prev if prev >= 0 else None,
                free_at=float(free_at),
                chain=tuple(chain),
                waited=waited,
                v=v if v >= 0 else None,
                paper_u0=started_before[-1] if started_before else None,
            )
        )
    return gaps


def _ratio(lhs: float, rhs: float) -> float:
    if rhs > 0:
        return lhs / rhs
    return 0.0 if lhs <= 0 else math.inf


def step_checks(view: HareView, run: Alg1Run, idle: np.ndarray | None = None) -> dict[str, float]:
    """Worst LHS/RHS over idle periods of (15), the paper's (16), (17), the paper's per-gap bound
    that (20) telescopes, and the repaired per-gap inequality; see the module docstring. Infinite
    alpha: the bound is vacuous (0). ``idle``: :func:`idle_before`, if the caller has it."""
    a = alpha(view)
    n_arr, _, _ = view.task_arrays
    H = run.priority
    idle = idle_before(view, run) if idle is None else idle
    worst = dict.fromkeys(
        ("lemma3_15", "lemma3_16", "lemma3_17", "lemma3_telescope", "lemma3_gap"), 0.0
    )
    if not np.isfinite(a):
        return worst
    cmax = view.train.max(axis=1) + view.sync.max(axis=1)  # T^{c,max} + T^{s,max} per job
    for g in idle_gaps(view, run):
        i = g.task
        span = sum(cmax[n_arr[u]] for u in g.chain)
        if g.waited:
            u0 = g.chain[0]
            worst["lemma3_15"] = max(worst["lemma3_15"], _ratio(run.start[u0], g.free_at))
            worst["lemma3_17"] = max(worst["lemma3_17"], _ratio(span, a * (H[i] - H[u0])))
            dv = idle[g.v] if g.v is not None else 0.0
            worst["lemma3_gap"] = max(worst["lemma3_gap"], _ratio(idle[i] - dv, a * (H[i] - H[u0])))
        else:  # the chain starts at an arrival: delta <= a_n + span <= alpha H directly
            worst["lemma3_gap"] = max(worst["lemma3_gap"], _ratio(idle[i], a * H[i]))
        d_prev, h_prev = (idle[g.prev], H[g.prev]) if g.prev is not None else (0.0, 0.0)
        worst["lemma3_telescope"] = max(
            worst["lemma3_telescope"], _ratio(idle[i] - d_prev, a * (H[i] - h_prev))
        )
        if g.prev is not None and g.paper_u0 is not None:
            worst["lemma3_16"] = max(worst["lemma3_16"], _ratio(H[g.prev], H[g.paper_u0]))
    return {k: float(v) for k, v in worst.items()}


def idle_before(view: HareView, run: Alg1Run) -> np.ndarray:
    """delta(i, m): x~_i minus the training time of the tasks before i on its GPU."""
    n_arr, _, _ = view.task_arrays
    tc = view.train[n_arr, run.gpu]
    idle = np.empty(len(n_arr))
    for m in range(view.n_gpus):
        on_m = np.flatnonzero(run.gpu == m)
        on_m = on_m[np.argsort(run.start[on_m], kind="stable")]
        busy_before = np.concatenate(([0.0], np.cumsum(tc[on_m])[:-1]))
        idle[on_m] = run.start[on_m] - busy_before
    return idle
