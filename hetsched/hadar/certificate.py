"""Certificates for an online run: how far its utility can be from the offline optimum of P1.

* ``dual_at_online_prices``: D(k) at the prices the online algorithm ended each round with (the
  dual solution a primal-dual algorithm carries; see :mod:`hetsched.hadar.pricing`). Any k >= 0
  gives a feasible P3 point once mu_j is set to the best payoff, so this is an upper bound on P1.
* ``lp_bound`` (``tight=True``): the least such bound, LP(P2) = P3, by column generation
  (:mod:`hetsched.hadar.colgen`), seeded with the online schedules; plus the integer master's
  value over the generated pool, a feasible offline solution checked by the validator.

``primal / bound`` is then a proven lower bound on the online run's competitive ratio on this
instance (online utility / OPT).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hetsched.hadar.colgen import column_generation, columns_from_decisions, decisions_of
from hetsched.hadar.online import OnlineRun
from hetsched.hadar.pricing import dual_value
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.model import Instance


@dataclass(frozen=True)
class OnlineCertificate:
    primal: float  # the online run's utility, recomputed by the validator
    dual_at_online_prices: float  # D(k_online) >= OPT(P1)
    lp_bound: float | None = None  # min_k D(k) found by column generation (= P3 when converged)
    lp_converged: bool | None = None
    offline_primal: float | None = None  # a validated offline P2 solution over the generated columns

    @property
    def bound(self) -> float:
        return min(b for b in (self.dual_at_online_prices, self.lp_bound) if b is not None)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["upper_bound_on_opt"] = self.bound
        out["online_over_opt_at_least"] = self.primal / self.bound if self.bound > 0 else 1.0
        return out


def certify_online(instance: Instance, run: OnlineRun, utility_name: str | None = None,
                   tight: bool = False, time_limit: float = 60.0) -> OnlineCertificate:
    v = hadar_view(instance)
    primal = validate_decisions(instance, run.decisions, utility_name).utility
    dual, _ = dual_value(v, run.prices(v.horizon), utility_name)
    if not tight:
        return OnlineCertificate(primal, dual)
    cg = column_generation(v, columns_from_decisions(v, run.decisions, utility_name), utility_name, time_limit=time_limit)
    offline = validate_decisions(instance, decisions_of(v, cg.chosen), utility_name)
    if not offline.valid:  # the pool's schedules are feasible by construction; say so loudly if not
        raise AssertionError(f"column generation returned an infeasible schedule: {offline.violations[:3]}")
    return OnlineCertificate(primal, dual, cg.bound, cg.converged, offline.utility)
