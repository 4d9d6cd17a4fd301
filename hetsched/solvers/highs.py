"""HiGHS on a Pyomo model, compiled to arrays (:mod:`hetsched.solvers.pyomo_arrays`): a linear
program by its interior point method (unless the model's ``highs_options`` say otherwise), a MILP
by its branch and cut. A MILP of at least :data:`CHILD_NONZEROS` nonzeros with a time limit runs
in a child process that is ended at the limit (:mod:`hetsched.solvers.child`): HiGHS's presolve
does not read its clock there."""

from __future__ import annotations

import time

import pyomo.environ as pe

from hetsched.core.deadline import grace
from hetsched.solvers.child import call_in_child
from hetsched.solvers.lp_arrays import ArrayLP, solve_array_mip, solve_array_mip_until
from hetsched.solvers.pyomo_arrays import is_linear_program, solve_pyomo_arrays
from hetsched.solvers.result import RawResult, SolverOptions, Status

#: a MILP with at least this many nonzeros and a time limit runs in a child process: HiGHS ran
#: 3.7 s for a limit of 2 s at 320,000 nonzeros and 24.5 s for 8 s at 1.5 million, and kept
#: to its limit at 39,000 (:mod:`hetsched.solvers.child`); starting the child and importing
#: HiGHS there (:mod:`hetsched.solvers.lp_arrays`, not Pyomo) takes about 0.6 s, less than
#: compiling a model of this size
CHILD_NONZEROS = 100_000


def solve_pyomo_highs(model: pe.ConcreteModel, opts: SolverOptions = SolverOptions()) -> RawResult:
    """Solve a Pyomo model with HiGHS; load its solution or incumbent into the model if there is
    one. The time limit covers compiling the model (else
    :class:`~hetsched.core.deadline.BuildTimeout`)."""
    if is_linear_program(model):
        return solve_pyomo_arrays(model, opts)
    return solve_pyomo_arrays(model, opts, engine=solve_mip, integer=True)


def solve_mip(lp: ArrayLP, opts: SolverOptions) -> RawResult:
    """:func:`~hetsched.solvers.lp_arrays.solve_array_mip`, in a child process ended at the time
    limit (plus half its grace) where the MILP is large (:data:`CHILD_NONZEROS`)."""
    limit = opts.time_limit
    if limit is None or lp.matrix.nnz < CHILD_NONZEROS:
        return solve_array_mip(lp, opts)
    t0 = time.perf_counter()
    end = time.time() + limit  # the child's clock is the same wall clock
    answered, raw = call_in_child(solve_array_mip_until, (lp, opts, end), limit + grace(limit) / 2)
    if answered:
        return raw
    return RawResult(
        Status.TIME_LIMIT,
        None,
        None,
        time.perf_counter() - t0,
        log="highs: ended at its time limit in a child process (its presolve had not stopped)",
    )
