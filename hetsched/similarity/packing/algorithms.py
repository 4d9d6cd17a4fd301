"""Algorithm 3 (AppSci'24, Sec. 4.3) as printed, and the exact packing it is audited against.

* :func:`greedy_packing`: for each scheduled job sj alone on its GPU, in scheduling order, among
  the queued jobs that fit with it, take the one that keeps sj's own throughput highest, ties by
  the larger combined throughput (line 6: "max(throughput_sj) and max(sum(throughput(sj, j)))");
  delete it from the queue. The paper packs whenever the queue is non-empty; a pair is taken even
  if it lowers the round's total normalized throughput (w < 0), as the algorithm does.
* :func:`optimal_packing`: the maximum-weight assignment of queued jobs to solo jobs
  (``scipy.optimize.linear_sum_assignment`` on the pair values w, pairs with w <= 0 or that
  cannot share left out): the packing of largest total normalized throughput. The declarative
  model ``models/job_packing.py`` solves the same problem with HiGHS; the tests check that the two
  agree.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from hetsched.core.reports import ValidationReport, Violation
from hetsched.instance.model import Instance
from hetsched.similarity.packing.problem import Packing, PackingView, packing_view


def greedy_packing(view: PackingView, gain_only: bool = False) -> Packing:
    """Algorithm 3; ``gain_only``: skip pairs that lower the round's value (w <= 0), a repair
    the paper does not make. Each solo job's pick is read from its row at once: the largest
    own share, then the largest w, then the first in queue order."""
    gain, own = np.asarray(view.gain, dtype=float), np.asarray(view.own, dtype=float)
    open_ = np.ones(len(view.queue), dtype=bool)  # not yet taken
    pairs = []
    for a, s in enumerate(view.solo):
        ok = open_ & ~np.isnan(gain[a]) & ~np.isnan(own[a])
        if gain_only:
            ok &= gain[a] > 0
        if not ok.any():
            continue
        cand = np.flatnonzero(ok)
        top = cand[own[a, cand] == own[a, cand].max()]  # keep sj fast
        b = int(top[np.argmax(gain[a, top])])  # then the larger combined; argmax: the first
        open_[b] = False
        pairs.append((view.job_ids[s], view.job_ids[view.queue[b]]))
    return Packing(tuple(pairs))


def optimal_packing(view: PackingView) -> Packing:
    if not view.solo or not view.queue:
        return Packing(())
    w = np.where(np.isnan(view.gain), 0.0, np.maximum(view.gain, 0.0))
    rows, cols = linear_sum_assignment(w, maximize=True)
    return Packing(
        tuple(
            (view.job_ids[view.solo[a]], view.job_ids[view.queue[b]])
            for a, b in zip(rows, cols)
            if w[a, b] > 0
        )
    )


def check_packing(instance: Instance, packing: Packing) -> ValidationReport:
    """Independent check: every pair is (a job scheduled alone, a queued job) that fit together,
    each job in at most one pair; the value (|scheduled| + sum w, or its raw reading)
    recomputed from the table."""
    view = packing_view(instance)
    solo = {view.job_ids[s]: a for a, s in enumerate(view.solo)}
    queue = {view.job_ids[q]: b for b, q in enumerate(view.queue)}
    bad, seen, value = [], set(), view.unpacked
    for s, q in packing.pairs:
        if s not in solo:
            bad.append(Violation("not_solo", f"'{s}' is not scheduled alone on a GPU"))
            continue
        if q not in queue:
            bad.append(Violation("not_queued", f"'{q}' is not in the queue"))
            continue
        for j in (s, q):
            if j in seen:
                bad.append(Violation("twice", f"'{j}' is in two pairs"))
            seen.add(j)
        g = view.gain[solo[s], queue[q]]
        if np.isnan(g):
            bad.append(
                Violation(
                    "cannot_share",
                    f"'{s}' and '{q}' do not fit on one GPU or have no measured pair",
                )
            )
            continue
        value += float(g)
    return ValidationReport(not bad, value if not bad else None, {}, bad)
