"""Hadar's P2 (eqs. (2)-(2c)) by branch-and-price, without enumerating schedules: the master of
:mod:`hetsched.hadar.p2_master` (columns: one job's schedule, priced by Eq. (4)) on the
column-generation engine. Its LP is LP(P2) = P3 (``models/hadar_p3.py``); its integer optimum
is P2 = P1 (``models/hadar_p1.py``)."""

from __future__ import annotations

from hetsched.exact.spec import FormulationSpec
from hetsched.hadar.p2_master import decisions_of, p2_problem
from hetsched.hadar.view import hadar_view
from hetsched.instance.model import Instance
from hetsched.models.hadar_p1 import HadarDecisions, check
from hetsched.solvers.colgen import ColgenSolution, DantzigWolfeProblem


def build(instance: Instance) -> DantzigWolfeProblem:
    return p2_problem(hadar_view(instance))


def extract(
    problem: DantzigWolfeProblem, instance: Instance, solution: ColgenSolution
) -> HadarDecisions:
    return HadarDecisions(decisions_of(problem, solution.columns))


SPEC = FormulationSpec(
    name="hadar-p2",
    kind="colgen",
    build=build,
    extract=extract,
    validator=check,
    sense="max",
    objective_transform=lambda value, _: -value,
    summary="Hadar P2 (2)-(2c) by branch-and-price: schedules priced by Eq. (4), no enumeration",
)
