"""Certificates for an online run: how far its utility can be from the offline optimum of P1.

* ``dual_at_online_prices``: D(k) at the prices the online algorithm ended each round with (the
  dual solution a primal-dual algorithm carries; see :mod:`hetsched.hadar.pricing`). Any k >= 0
  gives a feasible P3 point once mu_j is set to the best payoff, so this is an upper bound on P1.
* ``lp_bound`` (``tight=True``): the least such bound, LP(P2) = P3, by column generation on the
  one engine (:mod:`hetsched.solvers.colgen` over the master of :mod:`hetsched.hadar.p2_master`),
  started from the online schedules; plus the engine's integer solution over the generated
  columns (rounding, dive, integer master; no branching), checked by the validator.

``primal / bound`` is then a proven lower bound on the online run's competitive ratio on this
instance (online utility / OPT).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from hetsched.hadar.online import OnlineRun
from hetsched.hadar.p2_master import decisions_of, p2_problem, plans_of
from hetsched.hadar.pricing import dual_value
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import HadarView, hadar_view
from hetsched.instance.model import Instance
from hetsched.solvers.colgen import solve_colgen
from hetsched.solvers.result import SolverOptions


@dataclass(frozen=True)
class OnlineCertificate:
    primal: float  # the online run's utility, recomputed by the validator
    dual_at_online_prices: float  # D(k_online) >= OPT(P1)
    lp_bound: float | None = None  # min_k D(k) found by column generation (= P3 when converged)
    lp_converged: bool | None = None
    offline_primal: float | None = (
        None  # a validated offline P2 solution over the generated columns
    )

    @property
    def bound(self) -> float:
        return min(b for b in (self.dual_at_online_prices, self.lp_bound) if b is not None)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["upper_bound_on_opt"] = self.bound
        out["online_over_opt_at_least"] = self.primal / self.bound if self.bound > 0 else 1.0
        return out


def certify_online(
    instance: Instance,
    run: OnlineRun,
    utility_name: str | None = None,
    tight: bool = False,
    time_limit: float = 60.0,
) -> OnlineCertificate:
    v = hadar_view(instance)
    primal = validate_decisions(instance, run.decisions, utility_name).utility
    dual, _ = dual_value(v, run.prices(v.horizon), utility_name)
    if not tight:
        return OnlineCertificate(primal, dual)
    lp = lp_p2(v, utility_name, plans_of(v, run.decisions), time_limit)
    offline = validate_decisions(instance, lp.decisions, utility_name)
    if (
        not offline.valid
    ):  # the columns are feasible schedules by construction; say so loudly if not
        raise AssertionError(
            f"column generation returned an infeasible schedule: {offline.violations[:3]}"
        )
    return OnlineCertificate(primal, dual, lp.bound, lp.converged, offline.utility)


@dataclass(frozen=True)
class LpP2:
    bound: float  # the least D(k) found: an upper bound on LP(P2) = P3 >= P1 (equal when converged)
    lp_value: float | None  # the last restricted master's value (a lower bound on LP(P2))
    converged: bool
    iterations: int
    prices: np.ndarray | None  # k[h, r, t] of the bound: D(k) = bound
    decisions: dict  # the engine's integer solution over the generated columns
    value: float  # its utility, as the engine computed it (the validator recomputes it)


def lp_p2(
    view: HadarView,
    utility_name: str | None = None,
    plans: dict | None = None,
    time_limit: float = 60.0,
    max_iterations: int | None = None,
) -> LpP2:
    """LP(P2) = P3 by column generation on the one engine (no branching), started from ``plans``
    (e.g. :func:`~hetsched.hadar.p2_master.plans_of` an online run); see the module docstring."""
    problem = p2_problem(view, utility_name, plans)
    problem.branch, problem.max_iterations = False, max_iterations
    raw = solve_colgen(problem, SolverOptions(time_limit=time_limit))
    stats = raw.solution.stats
    prices = None if stats.prices is None else problem.prepare(stats.prices)
    return LpP2(
        bound=-stats.lagrangian_bound,
        lp_value=None if stats.lp_value is None else -stats.lp_value,
        converged=stats.converged,
        iterations=stats.iterations,
        prices=prices,
        decisions=decisions_of(problem, raw.solution.columns),
        value=-raw.objective,
    )
