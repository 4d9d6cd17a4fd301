"""The interval LP with completion indicators: a MIP lower bound for Hare_Sched (issue 44).

The interval LP (:mod:`hetsched.models.hare_interval_lp`) lets a job progress slowly until late
while its C_n, bounded only through the mean busy time of its progress, stays early: on
hare-table2 6 jobs x 8 GPUs a job progresses until t = 137 with C_n = 118. Here a binary per job
and interval says whether the job is still unfinished, so C_n is at least the start of every
interval in which the job progresses, and at least the time its unstarted rounds need after it.
On the LP's grid and variables (z, C; with the LP's rate rows), add

    f_{n,l} in {0, 1}   1 if C_n > l_{n,l} (job n unfinished when interval l starts; l_{n,l} =
                        max(tau_l, a_n) as in the LP), for every (n, l) where n may progress
    P_{n,l} >= 0        progress of job n before interval l: P_{n,first} = 0,
                        P_{n,l+1} = P_{n,l} + sum_c z_{n,c,l}                       (progress)
    idle_after: sum_c T^c_{n,c} z_{n,c,l} <= |D_r| (tau_{l+1} - l_{n,l}) f_{n,l}
                (a finished job trains nothing; the LP's parallelism row times f, (5), (7))
    monotone:   f_{n,l+1} <= f_{n,l}
    remaining:  C_n >= LB_n + f_{n,l} (l_{n,l} - LB_n + L_n (N_n / |D_r| - 1)) - (L_n / |D_r|) P_{n,l}
    S_{n,c,l} >= 0      tasks of job n trained on class c from interval l on    (suffix)
    suffix_rate: C_n >= h + alpha . S_{n,.,l} - max(0, h - LB_n) (1 - f_{n,l}),
                h = l_{n,l} - |D_r| max_c alpha_c,  per facet alpha of Q_n and every l but the first

remaining, proved: if f_{n,l} = 0 the right side is at most LB_n = a_n + |R_n| L_n <= C_n. If
f_{n,l} = 1 then C_n > l_{n,l}, and N_n - P_{n,l} tasks are left at l_{n,l}; at most P_{n,l} /
|D_r| rounds are finished, so at least (N_n - P_{n,l}) / |D_r| - 1 rounds have not started, and
each takes at least L_n after l_{n,l} ((6), (7); :attr:`HareView.round_length`): C_n >= l_{n,l}
+ L_n ((N_n - P_{n,l}) / |D_r| - 1), the right side. (Where nothing is left the right side is
below l_{n,l} < C_n.)

suffix_rate, proved: if f_{n,l} = 0 job n trains nothing from interval l on (idle_after,
monotone), so S = 0 and the right side is at most LB_n. If f_{n,l} = 1, the tasks trained from
interval l on (all after l_{n,l}) belong to at most one round that started before l_{n,l}, at most
|D_r| tasks, so alpha . (its part) <= |D_r| max alpha, and to rounds that start at or after
l_{n,l} and run one after another until C_n, whose task vector lies in (C_n - l_{n,l}) Q_n
(:mod:`hetsched.hare.rates`), so alpha . (theirs) <= C_n - l_{n,l}. On hare-table2 it raised the
MIP's bound from 454.2 to 458.8 at 6 x 8 (solved in 28 s) and from 3,573 to 3,606 at 20 x 16 in
60 s.

Every optimal schedule of Hare_Sched, with f read off its C_n, is a feasible point of equal
objective, so the MIP's optimum and every dual bound the solver proves are lower bounds of OPT;
its LP relaxation contains the interval LP's (f = 1), so its root bound is at least the LP's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pe

from hetsched.core.reports import ValidationReport, Violation
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.view import hare_view
from hetsched.instance.model import Instance
from hetsched.models.hare_interval_lp import (
    EPSILON,
    ProgressSolution,
    build_from,
    interval_data,
    job_facets,
)
from hetsched.models.hare_interval_lp import (
    check as check_lp,
)
from hetsched.models.hare_interval_lp import (
    extract as extract_lp,
)


@dataclass(frozen=True)
class IndicatorSolution(ProgressSolution):
    """The LP's progress and C_n, with f[n, l] (1: job n unfinished when interval l starts; NaN
    where the model has no indicator, as n cannot progress in l)."""

    active: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["format"] = "hetsched.core.progress-indicators/1"
        out["active"] = {j: self.active[n].tolist() for n, j in enumerate(self.view.job_ids)}
        return out


def build(instance: Instance, eps: float = EPSILON) -> pe.ConcreteModel:
    d = interval_data(instance, eps)
    v, tau, left, N, Tc = d.view, d.tau, d.left, d.N, d.Tc
    m = build_from(d, instance.name)  # z, C and the interval LP's rows
    m.name = f"hare_interval_mip[{instance.name}]"
    per_round = v.tasks_per_round.astype(float)
    L = v.round_length
    spans: dict[int, list[int]] = {}  # the intervals in which job n may progress
    for n, l in sorted(set(zip(d.n.tolist(), d.l.tolist()))):
        spans.setdefault(n, []).append(l)
    width = {(n, l): float(tau[l + 1] - left[n, l]) for n in spans for l in spans[n]}
    m.NL = pe.Set(initialize=list(width), dimen=2, doc="(job n, interval l) where n may progress")
    m.f = pe.Var(m.NL, domain=pe.Binary, doc="f_{n,l}: job n unfinished when interval l starts")
    m.P = pe.Var(m.NL, domain=pe.NonNegativeReals, doc="P_{n,l}: progress before interval l")

    after = {(n, a): b for n, ls in spans.items() for a, b in zip(ls, ls[1:])}  # next interval
    before = {(n, b): a for (n, a), b in after.items()}

    def progress(_, n, l):
        if (n, l) not in before:  # job n's first interval
            return m.P[n, l] == 0
        prev = before[n, l]
        return m.P[n, l] == m.P[n, prev] + sum(m.z[n, c, prev] for c in range(len(d.classes)))

    m.progress = pe.Constraint(m.NL, rule=progress)  # P_{n,l}: progress before l, of (5)
    m.idle_after = pe.Constraint(  # a finished job trains nothing, (5), (7)
        m.NL,
        rule=lambda _, n, l: (
            sum(float(Tc[n, c]) * m.z[n, c, l] for c in range(len(d.classes)))
            <= float(per_round[n]) * width[n, l] * m.f[n, l]
        ),
    )
    m.monotone = pe.Constraint(list(after), rule=lambda _, n, l: m.f[n, after[n, l]] <= m.f[n, l])
    m.remaining = pe.Constraint(  # the unstarted rounds after l_{n,l}, (6), (7)
        m.NL,
        rule=lambda _, n, l: (
            m.C[n]
            >= float(d.lb[n])
            + float(left[n, l] - d.lb[n] + L[n] * (N[n] / per_round[n] - 1)) * m.f[n, l]
            - float(L[n] / per_round[n]) * m.P[n, l]
        ),
    )
    classes = range(len(d.classes))
    m.S = pe.Var(
        [(n, c, l) for n, l in width for c in classes],
        domain=pe.NonNegativeReals,
        doc="S_{n,c,l}: tasks of job n trained on class c from interval l on",
    )

    def suffix(_, n, c, l):
        later = m.S[n, c, after[n, l]] if (n, l) in after else 0.0
        return m.S[n, c, l] == m.z[n, c, l] + later

    m.suffix = pe.Constraint(list(m.S.index_set()), rule=suffix)  # S_{n,c,l}: from l on, of (5)
    rows = [
        (n, l, q)
        for n, l in width
        if d.facets[n] is not None and (n, l) in before
        for q in range(len(d.facets[n]))
    ]

    def suffix_rate(_, n, l, q):
        alpha = d.facets[n][q]
        head = float(left[n, l] - per_round[n] * alpha.max())  # l_{n,l} - |D_r| max alpha
        big = max(0.0, head - float(d.lb[n]))
        return m.C[n] >= head + sum(float(alpha[c]) * m.S[n, c, l] for c in classes) - big * (
            1 - m.f[n, l]
        )

    m.suffix_rate = pe.Constraint(rows, rule=suffix_rate)  # the rounds after l_{n,l}, (6)-(8)
    m.notes.append(f"completion indicators: {len(width)} binaries, {len(rows)} suffix rate rows")
    m.highs_options = {}  # a MIP: HiGHS's branch and cut
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> IndicatorSolution:
    base = extract_lp(m, instance, value)
    active = np.full_like(base.z[:, 0, :], np.nan)  # NaN: no indicator (n cannot progress in l)
    for n, l in m.NL:
        active[n, l] = round(value(m.f[n, l]))
    return IndicatorSolution(
        base.view, base.classes, base.tau, base.z, base.completion, base.cells, active=active
    )


def check(instance: Instance, sol: IndicatorSolution) -> ValidationReport:
    """The interval LP's rows (its own check), then the indicator rows (idle_after, monotone;
    remaining and suffix_rate give each C_n its least value), recomputed from the instance; the
    objective is sum_n w_n times the least C_n every row allows."""
    lp = check_lp(instance, sol)
    v = hare_view(instance)
    bad: list[Violation] = list(lp.violations)
    tau, z, given = sol.tau, sol.z, sol.active
    f = np.nan_to_num(given)
    N = v.rounds * v.tasks_per_round
    per_round = v.tasks_per_round.astype(float)
    left = np.maximum(tau[:-1][None, :], v.arrival[:, None])
    tol = 1e-6 * max(1.0, float(tau[-1]))
    Tc = v.train[:, [c[0] for c in sol.classes]]
    moved = np.einsum("nc,ncl->nl", Tc, z)
    for n, l in zip(*np.nonzero((moved > tol) & (f < 0.5))):
        bad.append(
            Violation("finished", f"job {v.job_ids[n]} progresses in interval {l} after C_n")
        )
    for n in range(v.n_jobs):
        defined = given[n][~np.isnan(given[n])]
        if np.any(np.diff(defined) > 0.5):
            bad.append(Violation("monotone", f"job {v.job_ids[n]}: unfinished again after f = 0"))
    before = np.concatenate((np.zeros((v.n_jobs, 1)), np.cumsum(z.sum(axis=1), axis=1)[:, :-1]), 1)
    L = v.round_length
    need = f * (left + L[:, None] * ((N[:, None] - before) / per_round[:, None] - 1))
    c_min = np.maximum(np.array([lp.completion[j] for j in v.job_ids]), need.max(axis=1))
    after = np.flip(np.cumsum(np.flip(z, axis=2), axis=2), axis=2)  # (n, c, l): from l on
    for n, facets in enumerate(job_facets(v, [list(c) for c in sol.classes])):
        defined = np.flatnonzero(~np.isnan(given[n]))
        later = defined[1:][f[n, defined[1:]] > 0.5]  # unfinished at l, l not the first
        for alpha in [] if facets is None or not len(later) else facets:
            head = left[n, later] - per_round[n] * alpha.max()
            c_min[n] = max(c_min[n], float((head + alpha @ after[n][:, later]).max()))
    objective = float(np.dot(v.weight, c_min))
    return ValidationReport(not bad, objective, dict(zip(v.job_ids, c_min.tolist())), bad)


SPEC = FormulationSpec(
    name="hare-interval-mip",
    kind="pyomo",
    build=build,
    extract=extract,
    summary="the interval LP with completion indicators: a stronger lower bound (a MIP)",
    objective_is_bound=True,
    validator=check,
    options=("eps",),
)
