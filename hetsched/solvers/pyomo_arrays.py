"""A linear Pyomo model compiled to arrays (Pyomo's ``LinearStandardFormCompiler``) and handed to
a solver as one :class:`~hetsched.solvers.lp_arrays.ArrayLP`.

Two users: the root cutting-plane loop (:mod:`hetsched.solvers.root_cuts`), which solves a
model's LP relaxation and appends rows, and the ``highs`` and ``clarabel`` backends
(:func:`solve_pyomo_arrays`: a linear program, or with ``integer`` a MILP). The compiler walks
each constraint once into a sparse matrix; a model whose rows are all plain linear lists is read
without it (:mod:`hetsched.solvers.linear_rows`: 0.063 -> 0.024 CPU s on Gavel's 2,048-job
LP, the same rows). Pyomo's persistent HiGHS interface instead hands the
model over variable by variable and constraint by constraint, which was most of the time of an
allocation LP of 16,384 jobs (issue 41, item 6), and 13.3 s against the compiler's 3.9 s for the
time-indexed MILP of ``ladder(24, 4)`` (2.7 million nonzeros).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyomo.environ as pe
from pyomo.common.collections import ComponentMap
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from hetsched.core.collector import collector_paused
from hetsched.core.deadline import deadline, grace
from hetsched.solvers.linear_rows import read_linear_rows
from hetsched.solvers.lp_arrays import INF, ArrayLP, solve_array_lp
from hetsched.solvers.result import RawResult, SolverOptions, Status


@dataclass
class CompiledLP:
    """``lp`` (its columns are ``columns``, Pyomo variables) and ``sign``: -1 when the model
    maximizes (an ArrayLP minimizes its negated objective)."""

    lp: ArrayLP
    columns: list
    sign: float

    @functools.cached_property
    def column(self) -> ComponentMap:
        """Each column's variable -> its index (made when first asked: a solve needs it only
        for a variable that no row holds)."""
        return ComponentMap((v, k) for k, v in enumerate(self.columns))


def compile_lp(
    model: pe.ConcreteModel, options: dict | None = None, integer: bool = False
) -> CompiledLP:
    """The continuous relaxation of ``model``'s active constraints and objective, as arrays
    (``options``: HiGHS's, the interior point method if None); with ``integer``, the columns of
    integer and binary variables are marked in ``integrality``."""
    with collector_paused():  # what it makes lives until it returns, as in a model's build
        compiled = _compile_lp(model, options)
        if integer:
            compiled.lp.integrality = np.array(
                [v.is_integer() or v.is_binary() for v in compiled.columns], dtype=np.int8
            )
        return compiled


def _compile_lp(model: pe.ConcreteModel, options: dict | None) -> CompiledLP:
    options = {"solver": "ipm"} if options is None else dict(options)
    rows = read_linear_rows(model)  # rows already linear lists, read as they are
    if rows is not None:
        sign = -1.0 if rows.maximize else 1.0
        columns, matrix = rows.columns, rows.matrix
        row_lower, row_upper = rows.row_lower, rows.row_upper
        cost, offset = sign * rows.cost, sign * rows.offset
    else:
        repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
        columns = list(repn.columns)
        sign = -1.0 if repn.objectives[0].sense == pe.maximize else 1.0
        # mixed form: bound_type -1 is a row A x >= rhs, 0 an equation, 1 a row A x <= rhs
        kinds = np.array([e.bound_type for e in repn.rows], dtype=int)
        rhs = np.asarray(repn.rhs, dtype=float)
        matrix = repn.A
        row_lower, row_upper = np.where(kinds <= 0, rhs, -INF), np.where(kinds >= 0, rhs, INF)
        cost = sign * np.asarray(repn.c.todense()).ravel()
        offset = sign * float(np.asarray(repn.c_offset).ravel()[0])
    bounds = [v.bounds for v in columns]  # one call a column, not two
    lp = ArrayLP(
        cost=cost,
        matrix=matrix,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=np.array([-INF if lb is None else float(lb) for lb, _ in bounds]),
        col_upper=np.array([INF if ub is None else float(ub) for _, ub in bounds]),
        offset=offset,
        options=options,
    )
    return CompiledLP(lp, columns, sign)


def is_linear_program(model: pe.ConcreteModel) -> bool:
    """No integer or binary variable among the model's variables (each distinct domain asked
    once: an indexed variable's elements mostly share one; 1.5 instead of 8.5 ms over the 6,145
    variables of Gavel's 2,048-job LP)."""
    for component in model.component_objects(pe.Var, active=True, descend_into=True):
        asked: set[int] = set()
        for v in component.values():
            domain = v.domain
            if id(domain) not in asked:
                asked.add(id(domain))
                if v.is_integer() or v.is_binary():
                    return False
    return True


def solve_pyomo_arrays(
    model: pe.ConcreteModel,
    opts: SolverOptions = SolverOptions(),
    engine: Callable[[ArrayLP, SolverOptions], RawResult] = solve_array_lp,
    integer: bool = False,
) -> RawResult:
    """See :func:`_solve_pyomo_arrays`. The collector is paused: the compiled arrays, the model
    and its values are alive until it returns, so its passes would walk the whole model for
    nothing (a third of compiling a 16,384-job LP, measured)."""
    with collector_paused():
        return _solve_pyomo_arrays(model, opts, engine, integer)


def _solve_pyomo_arrays(
    model: pe.ConcreteModel,
    opts: SolverOptions,
    engine: Callable[[ArrayLP, SolverOptions], RawResult],
    integer: bool,
) -> RawResult:
    """A linear program in Pyomo solved as arrays by ``engine``: HiGHS (the interior point method
    with crossover to a vertex unless the model's ``highs_options`` say otherwise) or
    :func:`hetsched.solvers.clarabel_lp.solve_array_lp_clarabel`; with ``integer``, a MILP
    (HiGHS's branch and cut, with the model's ``highs_options`` alone). The solution is loaded
    into the model's variables (a variable in no row nor objective takes its lower bound, else its
    upper, else 0).

    Compiling is Python work without a clock: a deadline at the time limit plus grace bounds it
    (:class:`~hetsched.core.deadline.BuildTimeout` past it). The solver's run is not under it:
    each keeps to its own limit (a large MILP in a child process,
    :func:`hetsched.solvers.highs.solve_mip`), and a deadline firing while it runs would
    discard what it found."""
    t0 = time.perf_counter()
    given = getattr(model, "highs_options", {})
    limit = opts.time_limit
    with deadline(None if limit is None else limit + grace(limit)):
        compiled = compile_lp(model, given if integer else {"solver": "ipm", **given}, integer)
    if opts.time_limit is not None:  # compiling used part of the limit
        left = max(0.05, float(opts.time_limit) - (time.perf_counter() - t0))
        opts = dataclasses.replace(opts, time_limit=left)
    raw = engine(compiled.lp, opts)
    raw.seconds = time.perf_counter() - t0
    bound = None if raw.bound is None else compiled.sign * raw.bound
    how = f"{raw.log} ({'a MILP' if integer else 'a linear program'}, as arrays)"
    # a MILP's incumbent is feasible at any status; an LP's iterate only at an optimum
    loaded = integer or raw.status in (Status.OPTIMAL, Status.FEASIBLE)
    if raw.solution is None or raw.objective is None or not loaded:
        return dataclasses.replace(raw, objective=None, bound=bound, log=how)
    for v, value in zip(compiled.columns, raw.solution.tolist()):
        v.set_value(value, skip_validation=True)
    for v in model.component_data_objects(pe.Var, active=True):
        if v.value is None and v not in compiled.column:
            v.set_value(v.lb if v.lb is not None else v.ub if v.ub is not None else 0.0)
    value = compiled.sign * raw.objective  # the ArrayLP minimized the negated maximum
    return RawResult(raw.status, value, bound, raw.seconds, value=pe.value, log=how)
