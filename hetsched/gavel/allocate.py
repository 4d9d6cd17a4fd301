"""``allocate()``: a Gavel allocation x_{j,r} for one policy, by the route that suits it.

* finish-time fairness: bisection on rho over LP tests (:mod:`hetsched.gavel.ftf`);
* ``packed``: space sharing over job pairs (``gavel-POLICY-packed``, pair throughputs from Gavel's table);
* by default (``route="auto"``), the LP built as arrays with identical jobs merged
  (:mod:`hetsched.gavel.fast`) for the policies that have it (``FAST_POLICIES``, the
  throughput sums: :func:`~hetsched.gavel.policies.fast_path`);
* otherwise, or with ``route="reference"``, the Pyomo formulation ``gavel-POLICY`` through
  :func:`hetsched.exact.solve.solve` (the tests cross-check the two routes).

Every route returns the same :class:`~hetsched.solvers.result.SolveResult`, its allocation checked
by the independent validator of :mod:`hetsched.gavel.validate`. ``convention`` picks
hetsched's or Gavel's normalizers (:mod:`hetsched.gavel.conventions`).
"""

from __future__ import annotations

from hetsched.core.errors import HetschedError
from hetsched.exact.solve import solve
from hetsched.gavel.conventions import CONVENTIONS, check_convention
from hetsched.gavel.fast import fast_solve
from hetsched.gavel.ftf import finish_time_fairness
from hetsched.gavel.policies import FAST_POLICIES, PACKED_POLICIES, POLICIES, fast_path
from hetsched.instance.model import Instance
from hetsched.solvers.result import SolveResult

#: how ``allocate`` solves: ``auto`` takes the fast path where the policy has one (else the
#: Pyomo model), ``fast`` insists on it, ``reference`` always builds the Pyomo model
ROUTES = ("auto", "fast", "reference")

#: the LP solver of ``route="reference"``: an interior point method on the KKT system, as Gavel's
#: own code (cvxpy + ECOS) solves these LPs; HiGHS's interior point works on normal equations,
#: which the max-min LPs' epigraph column z makes dense (issue 41, item 6:
#: :mod:`hetsched.solvers.clarabel_lp`). A cross-check of the fast path by another solver, too.
REFERENCE_SOLVER = "clarabel"


def allocate(
    instance: Instance,
    policy: str,
    *,
    packed: bool = False,
    route: str = "auto",
    throughputs: str | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    convention: str = "hetsched",
) -> SolveResult:
    """The allocation of ``policy`` (Gavel OSDI'20 Sec. 4) for ``instance``; ``throughputs`` is
    the pair-throughput table of ``packed`` (None: the copy shipped with hetsched). ``route``:
    see :data:`ROUTES`; the result's ``solver`` says which one ran (``highs-arrays``: the fast
    path, ``highs``: the Pyomo model where the policy has no fast path, ``clarabel``: the Pyomo
    model on the reference route). Both are checked by the same validator."""
    if policy not in POLICIES:
        raise HetschedError(f"unknown policy '{policy}' (known: {', '.join(POLICIES)})")
    if route not in ROUTES:
        raise HetschedError(f"unknown route '{route}' (known: {', '.join(ROUTES)})")
    check_convention(convention)
    if policy.startswith("finish-time-fairness"):  # quasi-convex: bisection over LP tests
        return finish_time_fairness(
            instance,
            route="pyomo" if route == "reference" else "fast",
            convention=convention,
            agnostic=policy.endswith("-agnostic"),
        )
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
            options={"throughputs": throughputs, "convention": convention},
        )
    if route == "fast" and fast_path(policy, convention) is None:
        raise HetschedError(
            f"--fast exists for {', '.join(FAST_POLICIES)}, max-throughput and (under Gavel's "
            f"convention) max-throughput-cost, not {policy}"
        )
    if route != "reference" and fast_path(policy, convention):
        return fast_solve(instance, policy, convention=convention)
    # makespan and min-total-duration read the same under both conventions (their models take none)
    same = policy in ("makespan", "min-total-duration")
    options = {} if same else {"convention": convention}
    return solve(
        instance,
        f"gavel-{policy}",
        REFERENCE_SOLVER if route == "reference" else "highs",
        time_limit=time_limit,
        threads=threads,
        options=options,
    )


__all__ = ["allocate", "ROUTES", "POLICIES", "PACKED_POLICIES", "FAST_POLICIES", "CONVENTIONS"]
