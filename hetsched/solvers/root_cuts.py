"""Kelley's cutting-plane loop on the LP relaxation of a Pyomo MILP, before the MILP is solved.

A formulation whose ``separate`` also cuts off *fractional* points (``FormulationSpec.
separate_fractional``) gets its inequalities at the root this way: the model is compiled once to
arrays (:func:`~hetsched.solvers.pyomo_arrays.compile_lp`), its
LP relaxation (integrality dropped) is solved by HiGHS's simplex in one persistent highspy object
(:func:`~hetsched.solvers.lp_arrays.run_highs`), ``separate`` reads the LP solution and
adds inequalities to the Pyomo model, and the new rows are appended to the LP, warm-started. The
inequalities stay in the Pyomo model: they are valid for the MILP, so its optimum is unchanged,
and the MILP solver then starts from the tighter relaxation (HiGHS takes no cut callback, so this
is where a formulation's own cuts can reach its branch and bound).

The loop's last LP value is a lower bound of the MILP (of its upper bound for a maximization).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import highspy
import numpy as np
import pyomo.environ as pe
from pyomo.common.collections import ComponentMap
from pyomo.repn import generate_standard_repn

from hetsched.solvers.highs_run import release, run_interruptibly
from hetsched.solvers.lp_arrays import run_highs
from hetsched.solvers.pyomo_arrays import compile_lp

INF = highspy.kHighsInf
STALL_ROUNDS = 5  # the loop stops when the bound moved less than STALL over this many rounds
STALL = 1e-4  # relative
MAX_ROUNDS = 500


@dataclass(frozen=True)
class RootCuts:
    """What the loop did: rounds of separation, inequalities added, the last LP bound (None when
    no LP was solved to optimality) and the wall seconds it took."""

    rounds: int
    cuts: int
    bound: float | None
    seconds: float
    why: str  # why it stopped: "no violated inequality", "stalled", "time", "round limit", "LP ..."


def root_cutting_planes(
    model: pe.ConcreteModel,
    separate: Callable[[Any, Callable[[Any], float]], int],
    time_limit: float,
) -> RootCuts:
    """Solve the LP relaxation of ``model`` and add ``separate``'s inequalities until none is
    violated, the bound stalls (< 0.01% over 5 rounds) or ``time_limit`` seconds have passed."""
    t0 = time.perf_counter()
    compiled = compile_lp(model, {"solver": "simplex"})  # warm starts after each round's rows
    relaxation, col, sign = compiled.lp, compiled.column, compiled.sign
    lp, _ = run_highs(relaxation, {"time_limit": max(0.01, time_limit)}, rerun=True)
    known = {id(c) for c in model.component_data_objects(pe.Constraint, active=True)}
    cuts, rounds, bound, history = 0, 0, None, []
    while True:
        status = lp.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            why = f"LP {lp.modelStatusToString(status)}"
            break
        bound = sign * lp.getInfo().objective_function_value
        history.append(bound)
        if len(history) > STALL_ROUNDS and abs(bound - history[-1 - STALL_ROUNDS]) <= STALL * max(
            1.0, abs(bound)
        ):
            why = "stalled"
            break
        x = np.asarray(lp.getSolution().col_value)

        def value(v, x=x):
            k = col.get(v)
            return float(pe.value(v)) if k is None else float(x[k])

        rounds += 1
        if not separate(model, value):
            why = "no violated inequality"
            break
        new = [
            c
            for c in model.component_data_objects(pe.Constraint, active=True)
            if id(c) not in known
        ]
        for c in new:
            known.add(id(c))
            cuts += _add_row(lp, c, col)
        if rounds >= MAX_ROUNDS:
            why = "round limit"
            break
        if time.perf_counter() - t0 > time_limit:
            why = "time"
            break
        lp.setOptionValue("time_limit", max(0.01, time_limit - (time.perf_counter() - t0)))
        run_interruptibly(lp)
    release(lp)  # freed on return, even where the collector is paused
    return RootCuts(rounds, cuts, bound, time.perf_counter() - t0, why)


def _add_row(lp: highspy.Highs, c, col: ComponentMap) -> bool:
    """Append the linear constraint ``c`` to ``lp``; False (and the LP is left without it, a
    weaker but still valid relaxation) when it is not linear in the compiled columns."""
    r = generate_standard_repn(c.body, compute_values=True)
    if r.nonlinear_expr is not None or any(v not in col for v in r.linear_vars):
        return False
    shift = float(r.constant)
    lo = -INF if c.lower is None else float(pe.value(c.lower)) - shift
    hi = INF if c.upper is None else float(pe.value(c.upper)) - shift
    idx = np.array([col[v] for v in r.linear_vars], dtype=np.int32)
    lp.addRow(lo, hi, len(idx), idx, np.array(r.linear_coefs, dtype=float))
    return True
