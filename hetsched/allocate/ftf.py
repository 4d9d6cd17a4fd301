"""Finish-time fairness by bisection on rho over the LP test of
``models/gavel/finish_time_fairness.py`` (see there for the maths)."""

from __future__ import annotations

import time

import numpy as np

from hetsched.allocate.fast import solve_max_min
from hetsched.allocation.conventions import check_convention
from hetsched.allocation.policies import denominators, need, policy_view, rho_max, waited
from hetsched.allocation.problem import Allocation, allocation_view
from hetsched.allocation.validate import allocation_report
from hetsched.instance.model import Instance
from hetsched.solve import solve
from hetsched.solvers.finalize import finalize
from hetsched.solvers.result import SolveResult, Status


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

    def test(rho: float):
        if route == "fast":
            status, z, x, _ = solve_max_min(
                view.throughput / need(view, t, rho, convention)[:, None], view.scale, view.count
            )
            return status, z, x
        options = {"rho": rho, "convention": convention, "agnostic": agnostic}
        r = solve(instance, "gavel-finish-time-fairness-test", "highs", options=options)
        return r.status, r.solver_objective, None if r.solution is None else r.solution.x

    notes = []
    if not np.any(t > 0):  # rho_j = thr_eq_j / thr_j: one LP, rho* = 1 / z*(rho = 1)
        status, z, x = test(1.0)
        best_x, lo = x, (1.0 / z if z > 0 else np.inf)
        notes.append("every t_j = 0: one LP (no bisection)")
    else:
        d = denominators(view, t, convention)
        lo = float(np.max(t / d))  # infeasible at any speed below this
        # the isolated share is feasible: rho = 1 under hetsched's convention (X^equal; its D_j
        # holds t_j), max_j (t_j + D_j) / D_j under Gavel's (D_j without t_j)
        hi = 1.0 if convention == "hetsched" else float(np.max((t + d) / d))
        status, z, x = test(hi)
        best_x = x
        steps = 0
        while hi - lo > tol * hi and steps < 100:
            mid = (lo + hi) / 2
            status, z, x = test(mid)
            if status == Status.OPTIMAL and z >= 1.0:
                hi, best_x = mid, x
            else:
                lo = mid
            steps += 1
        notes.append(f"bisection on rho: {steps} LP tests, bracket [{lo:.12g}, {hi:.12g}]")
    alloc = Allocation(
        policy, allocation_view(instance), best_x, instance.name, {"convention": convention}
    )
    report = allocation_report(rho_max(instance, convention, policy))(instance, alloc)
    result = SolveResult(
        instance=instance.name,
        model=f"gavel-{policy}",
        solver=f"highs-{route}",
        status=Status.OPTIMAL,
        objective=None,
        bound=lo,
        gap=None,
        seconds=0.0,
        solution=alloc,
        sense="min",
        notes=notes,
    )
    finalize(result, report)
    if (
        result.gap is not None and result.gap > 10 * tol + 1e-7
    ):  # the bisection's bracket is still open
        result.status = Status.FEASIBLE
    result.seconds = time.perf_counter() - t0
    return result
