"""``allocate()``: a Gavel allocation x_{j,r} for one policy, by the route that suits it.

* finish-time fairness: bisection on rho over LP tests (:mod:`hetsched.allocate.ftf`);
* ``packed``: space sharing over job pairs (``gavel-POLICY-packed``, pair throughputs from Gavel's table);
* by default (``route="auto"``), the LP built as arrays with identical jobs merged
  (:mod:`hetsched.allocate.fast`) for the policies that have it (``FAST_POLICIES``);
* otherwise, or with ``route="reference"``, the Pyomo formulation ``gavel-POLICY`` through
  :func:`hetsched.solve.solve` (the tests cross-check the two routes).

Every route returns the same :class:`~hetsched.solvers.result.SolveResult`, its allocation checked
by the independent validator of :mod:`hetsched.allocation.validate`.
"""

from __future__ import annotations

from hetsched.allocate.fast import fast_solve
from hetsched.allocate.ftf import finish_time_fairness
from hetsched.allocation.policies import FAST_POLICIES, PACKED_POLICIES, POLICIES
from hetsched.errors import HetschedError
from hetsched.instance.model import Instance
from hetsched.solve import solve
from hetsched.solvers.result import SolveResult

#: how ``allocate`` solves: ``auto`` takes the fast path where the policy has one (else the
#: Pyomo model), ``fast`` insists on it, ``reference`` always builds the Pyomo model
ROUTES = ("auto", "fast", "reference")


def allocate(
    instance: Instance,
    policy: str,
    *,
    packed: bool = False,
    route: str = "auto",
    throughputs: str | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
) -> SolveResult:
    """The allocation of ``policy`` (Gavel OSDI'20 Sec. 4) for ``instance``; ``throughputs`` is
    the pair-throughput table of ``packed`` (None: the copy shipped with hetsched). ``route``:
    see :data:`ROUTES`; the result's ``solver`` says which one ran (``highs-arrays``: the fast
    path, ``highs``: the Pyomo model). Both are checked by the same validator."""
    if policy not in POLICIES:
        raise HetschedError(f"unknown policy '{policy}' (known: {', '.join(POLICIES)})")
    if route not in ROUTES:
        raise HetschedError(f"unknown route '{route}' (known: {', '.join(ROUTES)})")
    if policy == "finish-time-fairness":  # quasi-convex: bisection over LP tests
        return finish_time_fairness(instance, route="pyomo" if route == "reference" else "fast")
    if packed:
        if policy not in PACKED_POLICIES:
            raise HetschedError(f"--packed exists for {', '.join(PACKED_POLICIES)}, not {policy}")
        if route == "fast":
            raise HetschedError("--packed has no fast path (it solves the Pyomo model)")
        return solve(
            instance,
            f"gavel-{policy}-packed",
            "highs",
            time_limit=time_limit,
            threads=threads,
            options={"throughputs": throughputs},
        )
    if route == "fast" and policy not in FAST_POLICIES:
        raise HetschedError(f"--fast exists for {', '.join(FAST_POLICIES)}, not {policy}")
    if route != "reference" and policy in FAST_POLICIES:
        return fast_solve(instance, policy)
    return solve(instance, f"gavel-{policy}", "highs", time_limit=time_limit, threads=threads)


__all__ = ["allocate", "ROUTES", "POLICIES", "PACKED_POLICIES", "FAST_POLICIES"]
