"""Packed pairs in the gang engine (:mod:`hetsched.sim.gang_engine`, "Packing"): the rates of the
round's pairs and what each job of a pair does in the round.

Two jobs share a gang when the plan gives them the same GPUs and the pair may be packed
(:meth:`~hetsched.sim.gang_model.GangJobs.pair_rate` positive both ways). Each then progresses at
its pair rate while both hold the gang, and the survivor at its own rate once the other
completes. A pair usually runs on for many rounds, so its two rates are kept from one round to
the next (:class:`PairRates`) rather than looked up again every round."""

from __future__ import annotations

import math

from hetsched.sim.gang_model import GangJobs


class PairRates:
    """The two pair rates of each packed pair (a, b) on r-type GPUs, n of them, a run as
    ``row_a`` and b as ``row_b`` (None: its own row): (rate of a beside b, rate of b beside a).
    A pair's rates are kept while it shares a gang from one round to the next: only the last
    round's pairs are kept, so the memory is a round's, not the run's."""

    def __init__(self, data: GangJobs):
        self._data = data
        self._last: dict[tuple, tuple[float, float]] = {}
        self._now: dict[tuple, tuple[float, float]] = {}

    def __call__(
        self, a: int, b: int, r: int, n: int, row_a: str | None, row_b: str | None
    ) -> tuple[float, float]:
        key = (a, b, r, n, row_a, row_b)
        got = self._last.get(key)
        if got is None:
            rate = self._data.pair_rate
            got = (rate(a, b, r, n, (row_a, row_b)), rate(b, a, r, n, (row_b, row_a)))
        self._now[key] = got
        return got

    def next_round(self) -> None:
        """The round's pairs become the ones kept; call once per round."""
        self._last, self._now = self._now, {}


def packed_round(
    remaining: list[float],
    data: GangJobs,
    plan: dict[int, tuple[int, ...]],
    rows: dict[int, str],
    delays: dict[int, float],
    t: float,
    L: float,
    pair: tuple[int, int],
    rates: tuple[float, float],
) -> dict[int, tuple[float, float, bool]]:
    """(end, progress, completes) of the two jobs of ``pair`` sharing a gang in the round
    [t, t + L] at their pair ``rates``: each restores for its delay, runs at its pair rate while
    the other holds the gang and at its own rate after the other completes."""
    (a, b), (pa, pb) = pair, rates
    ra, rb, da, db = remaining[a], remaining[b], delays[a], delays[b]
    T = t + L
    fa = t + da + ra / pa if ra <= pa * (L - da) * (1 + 1e-12) else math.inf
    fb = t + db + rb / pb if rb <= pb * (L - db) * (1 + 1e-12) else math.inf
    if (fb, b) < (fa, a):  # b completes first: name it a
        a, b, pa, pb, ra, rb, da, db, fa = b, a, pb, pa, rb, ra, db, da, fb
    if fa == math.inf:  # both run the whole round together
        return {a: (T, pa * (L - da), False), b: (T, pb * (L - db), False)}
    start = t + db
    together = pb * max(0.0, fa - start)
    if rb <= together * (1 + 1e-12):
        return {a: (fa, ra, True), b: (start + rb / pb, rb, True)}
    alone_from = max(fa, start)
    solo = data.run_rate(b, plan[b], rows.get(b))
    more = solo * (T - alone_from)
    if rb <= (together + more) * (1 + 1e-12):
        return {a: (fa, ra, True), b: (alone_from + (rb - together) / solo, rb, True)}
    return {a: (fa, ra, True), b: (T, together + more, False)}
