"""A Pyomo model whose rows are already linear lists read straight into arrays, where Pyomo's
standard-form compiler would walk each one as an expression tree.

A row qualifies when its relation's sides are numbers, unfixed variables, or
``LinearExpression``s with numeric coefficients (what ``models/gavel/common.py``'s ``linear()``
builds); the objective likewise. Anything else (a parameter, a fixed variable, a product, a
strict or a variable-bounded range) and the model goes to Pyomo's compiler whole
(:func:`read_linear_rows` returns None), so this is a fast path with the library behind it,
never a second semantics. Why (issue 41, item 6): on Gavel's max-min LP of 2,048 jobs, Pyomo's
compiler took 0.063 CPU s, more than cvxpy + ECOS's whole run (0.060-0.071 s), for rows that
hold their coefficients and variables as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pe
import scipy.sparse as sp
from pyomo.core.base.var import VarData
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression
from pyomo.core.expr.relational_expr import (
    EqualityExpression,
    InequalityExpression,
    RangedExpression,
)

_NUMBERS = (int, float, np.float64, np.int64)  # what a coefficient may be


@dataclass
class LinearRows:
    """min/max ``cost`` x + ``offset`` over ``row_lower`` <= ``matrix`` x <= ``row_upper``;
    ``columns`` are the Pyomo variables in column order (those in a row or the objective)."""

    columns: list
    matrix: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    cost: np.ndarray
    offset: float
    maximize: bool


class _NotPlain(Exception):
    """A side that is not a number, an unfixed variable or a plain LinearExpression."""


def _terms(side, coefs: list, variables: list, sign: float) -> float:
    """Append ``sign`` times the side's terms; return ``sign`` times its constant. Whether a
    variable is fixed is asked once per column, by the caller."""
    kind = side.__class__
    if kind in _NUMBERS:
        return sign * side
    if kind is LinearExpression:
        args = side.args
        constant = 0.0
        for arg in args:
            if arg.__class__ is MonomialTermExpression:
                c, v = arg.args
                if c.__class__ not in _NUMBERS:
                    raise _NotPlain
                coefs.append(sign * c)
                variables.append(v)
            elif arg.__class__ in _NUMBERS:
                constant += arg
            elif isinstance(arg, VarData):
                coefs.append(sign)
                variables.append(arg)
            else:
                raise _NotPlain
        return sign * constant
    if isinstance(side, VarData):
        coefs.append(sign)
        variables.append(side)
        return 0.0
    raise _NotPlain


def _row(expr, coefs: list, variables: list) -> tuple[float, float]:
    """Append the row's terms (on one side: the side that is not a number, or left minus
    right); return its (lower, upper) bounds."""
    kind = expr.__class__
    if kind is RangedExpression and not any(expr.strict):
        low, body, high = expr.args
        if low.__class__ not in _NUMBERS or high.__class__ not in _NUMBERS:
            raise _NotPlain
        shift = _terms(body, coefs, variables, 1.0)
        return low - shift, high - shift
    if kind is not EqualityExpression and (kind is not InequalityExpression or expr.strict):
        raise _NotPlain
    left, right = expr.args
    equation = kind is EqualityExpression
    if left.__class__ in _NUMBERS:  # a <= body (a == body)
        shift = _terms(right, coefs, variables, 1.0)
        return left - shift, left - shift if equation else np.inf
    if right.__class__ in _NUMBERS:  # body <= b (body == b)
        shift = _terms(left, coefs, variables, 1.0)
        return right - shift if equation else -np.inf, right - shift
    shift = _terms(left, coefs, variables, 1.0) + _terms(right, coefs, variables, -1.0)
    return -shift if equation else -np.inf, -shift  # left - right <= 0 (== 0)


def read_linear_rows(model: pe.ConcreteModel) -> LinearRows | None:
    """The model's active rows and objective as arrays, or None where any of them is not plain
    (module doc): the caller then compiles it with Pyomo."""
    objectives = list(model.component_data_objects(pe.Objective, active=True))
    if len(objectives) != 1:
        return None
    indptr, lower, upper = [0], [], []
    coefs: list = []
    variables: list = []
    try:
        for con in model.component_data_objects(pe.Constraint, active=True):
            lo, hi = _row(con.expr, coefs, variables)
            if len(variables) == indptr[-1]:
                return None  # a row of constants: Pyomo's compiler says what it makes of it
            lower.append(lo)
            upper.append(hi)
            indptr.append(len(variables))
        obj_coefs: list = []
        obj_vars: list = []
        offset = _terms(objectives[0].expr, obj_coefs, obj_vars, 1.0)
    except _NotPlain:
        return None
    # variables are not hashable (their == builds an equation): keyed by id, in first-use order
    columns = list({id(v): v for v in (*variables, *obj_vars)}.values())
    column = {id(v): i for i, v in enumerate(columns)}
    index = [column[id(v)] for v in variables]
    objective = [column[id(v)] for v in obj_vars]
    if any(v.fixed for v in columns):
        return None  # Pyomo's compiler makes constants of them
    matrix = sp.csr_matrix(
        (np.asarray(coefs, dtype=float), np.asarray(index, dtype=np.int64), np.asarray(indptr)),
        shape=(len(lower), len(columns)),
    )
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    if (np.diff(matrix.indptr) == 0).any():
        return None  # terms that cancel to a row of constants: as above
    cost = np.zeros(len(columns))
    np.add.at(cost, objective, obj_coefs)
    return LinearRows(
        columns,
        matrix,
        np.asarray(lower, dtype=float),
        np.asarray(upper, dtype=float),
        cost,
        float(offset),
        objectives[0].sense == pe.maximize,
    )
