"""Rows that are already linear lists, read straight into arrays
(:mod:`hetsched.solvers.linear_rows`): the same half-spaces and objective as Pyomo's
standard-form compiler on every kind of row, and the model left to Pyomo where a row is not
plain."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe
import pytest
from pyomo.common.errors import InvalidConstraintError
from pyomo.core.expr.numeric_expr import LinearExpression
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from hetsched.solvers.linear_rows import read_linear_rows
from hetsched.solvers.pyomo_arrays import compile_lp, solve_pyomo_arrays
from hetsched.solvers.result import Status


def linear(coefs, variables, constant=0.0):
    return LinearExpression(
        constant=constant, linear_coefs=list(coefs), linear_vars=list(variables)
    )


def half_spaces(rows, columns, lower, upper) -> set:
    """Each row l <= a x <= u as its half-spaces a x <= u and -a x <= -l (an equation as one
    pair, signed so that its first coefficient is positive), over the variables' names."""
    out = set()
    names = [v.name for v in columns]
    dense = np.asarray(rows.todense())
    for a, lo, hi in zip(dense, lower, upper):
        terms = tuple(sorted((n, round(float(c), 9)) for n, c in zip(names, a) if c != 0))
        if lo == hi:
            flip = -1.0 if terms[0][1] < 0 else 1.0
            out.add(("=", tuple((n, flip * c) for n, c in terms), round(flip * lo, 9) + 0.0))
            continue
        if np.isfinite(hi):
            out.add(("<=", terms, round(float(hi), 9) + 0.0))
        if np.isfinite(lo):
            out.add(("<=", tuple((n, -c) for n, c in terms), round(-float(lo), 9) + 0.0))
    return out


def pyomo_form(m):
    """Pyomo's compiler's rows as (half-spaces, objective by name, offset, sense)."""
    r = LinearStandardFormCompiler().write(m, mixed_form=True, set_sense=None)
    kinds = np.array([e.bound_type for e in r.rows])
    rhs = np.asarray(r.rhs, dtype=float)
    lower = np.where(kinds <= 0, rhs, -np.inf)
    upper = np.where(kinds >= 0, rhs, np.inf)
    cost = np.asarray(r.c.todense()).ravel()
    objective = {v.name: c for v, c in zip(r.columns, cost) if c}
    return (
        half_spaces(r.A, r.columns, lower, upper),
        objective,
        float(np.asarray(r.c_offset).ravel()[0]),
        r.objectives[0].sense == pe.maximize,
    )


def our_form(m):
    q = read_linear_rows(m)
    assert q is not None
    objective = {v.name: c for v, c in zip(q.columns, q.cost) if c}
    return (
        half_spaces(q.matrix, q.columns, q.row_lower, q.row_upper),
        objective,
        q.offset,
        q.maximize,
    )


def every_kind_of_row() -> pe.ConcreteModel:
    m = pe.ConcreteModel()
    m.x = pe.Var(range(3), bounds=(0, 5))
    m.y = pe.Var()
    m.ranged = pe.Constraint(expr=pe.inequality(1, linear([1.0, 2.0], [m.x[0], m.x[1]]), 4))
    m.equation = pe.Constraint(expr=linear([1.0], [m.x[2]], 3.0) == m.y)
    m.both_sides = pe.Constraint(expr=m.y >= linear([2.0, -1.0], [m.x[0], m.x[0]]))
    m.constants = pe.Constraint(expr=linear([1.0, 1.0], [m.x[1], m.x[2]], 2.0) <= 7)
    m.var_alone = pe.Constraint(expr=m.y <= 9)
    m.off = pe.Constraint(expr=m.y >= 100)
    m.off.deactivate()
    m.o = pe.Objective(expr=linear([1.0, 1.0], [m.y, m.x[1]], 2.0), sense=pe.maximize)
    return m


def test_every_kind_of_row_reads_as_pyomo_compiles_it():
    m = every_kind_of_row()
    assert our_form(m) == pyomo_form(m)


@pytest.mark.parametrize("seed", range(20))
def test_random_plain_models_read_as_pyomo_compiles_them(seed):
    rng = np.random.default_rng(seed)
    m = pe.ConcreteModel()
    n = int(rng.integers(2, 7))
    m.x = pe.Var(range(n), bounds=(-3, 4))
    for k in range(int(rng.integers(1, 8))):
        picks = rng.choice(n, size=int(rng.integers(1, n)), replace=False).tolist()
        coefs = (rng.integers(1, 6, len(picks)) * rng.choice([-1, 1], len(picks))).tolist()
        # the first variable once more (the two terms merge, never to zero)
        picks.append(picks[0])
        coefs.append(1.0 if coefs[0] != -1 else 2.0)
        side = linear([float(c) for c in coefs], [m.x[i] for i in picks])
        free = [i for i in range(n) if i not in picks]  # a variable on the other side, or a number
        other = m.x[free[0]] if free and rng.random() < 0.5 else float(rng.integers(-4, 5))
        kind = int(rng.integers(4))
        expr = (
            side <= other
            if kind == 0
            else side >= other
            if kind == 1
            else side == other
            if kind == 2
            else pe.inequality(-10.0, side, 10.0)
        )
        m.add_component(f"c{k}", pe.Constraint(expr=expr))
    sense = pe.maximize if rng.random() < 0.5 else pe.minimize
    m.o = pe.Objective(
        expr=linear(rng.normal(size=n).round(3).tolist(), list(m.x.values()), 1.5), sense=sense
    )
    assert our_form(m) == pyomo_form(m)
    ours = solve_pyomo_arrays(m)
    theirs = solve_pyomo_arrays(with_the_objective_summed(m))  # Pyomo's compiler
    assert ours.status == theirs.status
    if ours.status == Status.OPTIMAL:
        assert ours.objective == pytest.approx(theirs.objective, abs=1e-7)


def small_model(make) -> pe.ConcreteModel:
    m = pe.ConcreteModel()
    m.x = pe.Var(range(2), bounds=(0, 1))
    m.p = pe.Param(initialize=2.0, mutable=True)
    m.c = pe.Constraint(expr=make(m))
    m.o = pe.Objective(expr=m.x[0] + m.x[1], sense=pe.maximize)
    return m


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.p * m.x[0] <= 1,  # a parameter
        lambda m: linear([m.p], [m.x[0]]) <= 1,  # a parameter as a coefficient
    ],
)
def test_a_row_with_a_parameter_leaves_the_model_to_pyomo(make):
    m = small_model(make)
    assert read_linear_rows(m) is None
    raw = solve_pyomo_arrays(m)  # Pyomo's compiler took it
    assert raw.status == Status.OPTIMAL and raw.objective == pytest.approx(1.5)


def test_a_product_leaves_the_model_to_pyomo_which_refuses_it():
    m = small_model(lambda m: m.x[0] * m.x[1] <= 3)
    assert read_linear_rows(m) is None
    with pytest.raises(InvalidConstraintError):
        compile_lp(m)


def test_a_sum_of_variables_is_plain():
    m = small_model(lambda m: sum(m.x.values()) <= 1.5)
    assert our_form(m) == pyomo_form(m)


def test_a_fixed_variable_leaves_the_model_to_pyomo():
    m = every_kind_of_row()
    m.y.fix(4.0)
    assert read_linear_rows(m) is None
    compiled = compile_lp(m)
    assert m.y not in compiled.column  # Pyomo's compiler made a constant of it


def test_the_fast_read_and_pyomo_reach_the_same_optimum():
    fast = solve_pyomo_arrays(every_kind_of_row())
    slow = solve_pyomo_arrays(with_the_objective_summed(every_kind_of_row()))
    assert fast.status == slow.status == Status.OPTIMAL
    assert fast.objective == pytest.approx(slow.objective, abs=1e-9)


def with_the_objective_summed(m: pe.ConcreteModel) -> pe.ConcreteModel:
    """The same model with its objective times a parameter of value 1: not plain,
    so Pyomo's compiler takes the whole model."""
    (objective,) = m.component_data_objects(pe.Objective, active=True)
    m.one = pe.Param(initialize=1.0, mutable=True)
    m.summed = pe.Objective(expr=m.one * objective.expr, sense=objective.sense)
    objective.deactivate()
    assert read_linear_rows(m) is None
    return m
