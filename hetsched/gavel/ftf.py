"""Finish-time fairness by bisection on rho over the LP test of
``models/gavel/finish_time_fairness.py`` (see there for the maths)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from hetsched.exact.solve import solve
from hetsched.gavel.conventions import check_convention
from hetsched.gavel.fast import solve_max_min
from hetsched.gavel.policies import (
    attained_rho,
    denominators,
    need_given,
    policy_view,
    rho_max,
    waited,
)
from hetsched.gavel.problem import Allocation, AllocationView, allocation_view
from hetsched.gavel.validate import allocation_report
from hetsched.instance.model import Instance
from hetsched.solvers.finalize import finalize
from hetsched.solvers.result import SolveResult, Status


@dataclass
class Bisection:
    """What the bisection on rho found: the best allocation, the largest rho proven infeasible
    (``lo``) and the smallest proven feasible (``hi``), and how."""

    x: np.ndarray | None
    lo: float
    hi: float
    notes: list[str]


def bisect_rho(
    view: AllocationView,
    t: np.ndarray,
    test: Callable[[float], tuple[Status, float, np.ndarray | None]],
    convention: str = "hetsched",
    isolated: np.ndarray | None = None,
    tol: float = 1e-9,
    choose: Callable[[float], tuple[Status, float, np.ndarray | None]] | None = None,
    d: np.ndarray | None = None,
) -> Bisection:
    """min_X max_j rho_j(X) by bisection on rho; ``test(rho)`` is the LP test (max z, feasible
    iff z >= 1). ``isolated``: Gavel's I_j (isolated time of earlier rounds; default 0). Each
    test also moves an end past its rho where it proves more: the upper end drops to the rho
    a feasible test's allocation attains (:func:`~hetsched.gavel.policies.attained_rho`), the
    lower end rises to what a failed test's z proves (:func:`infeasible_below`).
    ``choose``: a test solved once more at the rho whose allocation is kept, whose x (if it
    solved) is kept instead: one of the same LP's optima, picked by a tie-break, so that the
    tie-break costs one LP rather than one per step. ``d``: the denominators D_j, if known."""
    if not np.any(t > 0):  # rho_j = (R_j / D_j) / thr_j: one LP, rho* = 1 / z*(rho = 1)
        status, z, x = test(1.0)
        rho = 1.0 / z if z > 0 else np.inf
        x = _chosen(choose, 1.0, x)
        return Bisection(x, rho, rho, ["every t_j = 0: one LP (no bisection)"])
    d = denominators(view, t, convention, isolated) if d is None else d
    lo = float(np.max(t / d))  # infeasible at any speed below this
    # the isolated share is feasible: rho = 1 under hetsched's convention (X^equal; its D_j
    # holds t_j), max_j (t_j + R_j / thr_j(X^iso)) / D_j under Gavel's
    hi = 1.0
    if convention == "gavel":
        hi = float(np.max((t + d - (0 if isolated is None else isolated)) / d))
    status, z, best_x = test(hi)
    if status == Status.OPTIMAL and z >= 1.0:
        hi = min(hi, attained_rho(view, t, d, best_x))
    steps = 0
    while hi - lo > tol * hi and steps < 100:
        mid = (lo + hi) / 2
        status, z, x = test(mid)
        if status == Status.OPTIMAL and z >= 1.0:
            hi, best_x = min(mid, attained_rho(view, t, d, x)), x
        else:
            lo = infeasible_below(t, d, mid, z) if status == Status.OPTIMAL else mid
        steps += 1
    best_x = _chosen(choose, hi, best_x)
    return Bisection(
        best_x, lo, hi, [f"bisection on rho: {steps} LP tests, bracket [{lo:.12g}, {hi:.12g}]"]
    )


#: the relative error a test's z is trusted to (the dense simplex certifies 1e-9)
Z_MARGIN = 1e-8


def infeasible_below(t: np.ndarray, d: np.ndarray, rho: float, z: float) -> float:
    """A rho below which no allocation is feasible, from a test at ``rho`` that reached only
    ``z`` < 1. At rho' > rho job j's need shrinks by the factor f_j = (rho' D_j - t_j) /
    (rho D_j - t_j), so every allocation's z at rho' is at most z max_j f_j, which is below 1
    until some f_j reaches 1/z: below min_j (t_j + (rho D_j - t_j) / z) / D_j every test fails.
    ``z`` is taken Z_MARGIN higher than reported."""
    slack = rho * d - t
    z = z * (1.0 + Z_MARGIN)
    if not 0.0 < z < 1.0 or not np.all(slack > 0):
        return rho
    return max(rho, float(np.min((t + slack / z) / d)))  # never below rho, in floats too


def _chosen(choose, rho: float, x: np.ndarray | None) -> np.ndarray | None:
    """The allocation ``choose`` (if given) picks among the optima of the test at ``rho``."""
    if choose is None or x is None:
        return x
    status, _, picked = choose(rho)
    return picked if status == Status.OPTIMAL and picked is not None else x


def fast_test(
    view: AllocationView,
    t: np.ndarray,
    convention: str,
    isolated=None,
    method: str = "decomposition",
    merge: bool = True,
    tiebreak: bool = False,
    notes: list[str] | None = None,
    d: np.ndarray | None = None,
):
    """The LP test of rho as arrays (:func:`hetsched.gavel.fast.solve_max_min` with
    ``method``, ``merge``, ``tiebreak``; ``notes`` collects what it says; ``d``: the
    denominators D_j, if known)."""
    if d is None:  # the same at every rho
        d = denominators(view, t, convention, isolated)

    def test(rho: float):
        req = need_given(view.steps, d, t, rho)
        a = view.throughput / req[:, None]
        status, z, x, _ = solve_max_min(
            a, view.scale, view.count, merge, method, notes, tiebreak=tiebreak
        )
        return status, z, x

    return test


def finish_time_fairness(
    instance: Instance,
    tol: float = 1e-9,
    route: str = "fast",
    convention: str = "hetsched",
    agnostic: bool = False,
) -> SolveResult:
    """min_X max_j rho_j(X): objective = the validated max rho of the best allocation found,
    bound = the largest rho proven infeasible (or the LP optimum when every t_j = 0).
    ``convention`` and ``agnostic``: see ``models/gavel/finish_time_fairness.py``."""
    t0 = time.perf_counter()
    check_convention(convention)
    policy = "finish-time-fairness" + ("-agnostic" if agnostic else "")
    view = policy_view(allocation_view(instance), policy)
    t = waited(view, instance)

    def pyomo_test(rho: float):
        options = {"rho": rho, "convention": convention, "agnostic": agnostic}
        r = solve(instance, "gavel-finish-time-fairness-test", "highs", options=options)
        return r.status, r.solver_objective, None if r.solution is None else r.solution.x

    test = fast_test(view, t, convention) if route == "fast" else pyomo_test
    found = bisect_rho(view, t, test, convention, tol=tol)
    alloc = Allocation(
        policy, allocation_view(instance), found.x, instance.name, {"convention": convention}
    )
    report = allocation_report(rho_max(instance, convention, policy))(instance, alloc)
    result = SolveResult(
        instance=instance.name,
        model=f"gavel-{policy}",
        solver=f"highs-{route}",
        status=Status.OPTIMAL,
        bound=found.lo,
        solution=alloc,
        sense="min",
        notes=found.notes,
    )
    finalize(result, report)
    if (
        result.gap is not None and result.gap > 10 * tol + 1e-7
    ):  # the bisection's bracket is still open
        result.status = Status.FEASIBLE
    result.seconds = time.perf_counter() - t0
    return result
