"""``allocate()``: a Gavel allocation x_{j,r} for one policy, by the route that suits it.

* finish-time fairness: bisection on rho over LP tests (:mod:`hetsched.allocate.ftf`);
* ``packed``: space sharing over job pairs (``gavel-POLICY-packed``, pair throughputs from Gavel's table);
* ``fast``: the LP built as arrays with identical jobs merged (:mod:`hetsched.allocate.fast`);
* otherwise the Pyomo formulation ``gavel-POLICY`` through :func:`hetsched.solve.solve`.

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


def allocate(
    instance: Instance,
    policy: str,
    *,
    packed: bool = False,
    fast: bool = False,
    throughputs: str | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
) -> SolveResult:
    """The allocation of ``policy`` (Gavel OSDI'20 Sec. 4) for ``instance``; ``throughputs`` is
    the pair-throughput table of ``packed`` (None: the copy shipped with hetsched)."""
    if policy not in POLICIES:
        raise HetschedError(f"unknown policy '{policy}' (known: {', '.join(POLICIES)})")
    if policy == "finish-time-fairness":  # quasi-convex: bisection over LP tests
        return finish_time_fairness(instance, route="fast" if fast else "pyomo")
    if packed:
        if policy not in PACKED_POLICIES:
            raise HetschedError(f"--packed exists for {', '.join(PACKED_POLICIES)}, not {policy}")
        return solve(
            instance,
            f"gavel-{policy}-packed",
            "highs",
            time_limit=time_limit,
            threads=threads,
            options={"throughputs": throughputs},
        )
    if fast:
        if policy not in FAST_POLICIES:
            raise HetschedError(f"--fast exists for {', '.join(FAST_POLICIES)}, not {policy}")
        return fast_solve(instance, policy)
    return solve(instance, f"gavel-{policy}", "highs", time_limit=time_limit, threads=threads)


__all__ = ["allocate", "POLICIES", "PACKED_POLICIES", "FAST_POLICIES"]
