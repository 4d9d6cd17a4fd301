"""GPU grouping of HLAS (Hare/HLAS, TCC'24, Sec. IV, eqs. (4)-(6)): split the GPUs into U groups
so that every job sees groups of similar speed.

    min_z  max_n (p_n^max - p_n^min)
    s.t.   sum_u z_{m,u} = 1                      for all m   (4) one_group
           p_n^max = max_u sum_m z_{m,u} s_{n,m}              (5) speed_max
           p_n^min = min_u sum_m z_{m,u} s_{n,m}              (6) speed_min

with s_{n,m} = 1 / (T^c_{n,m} + T^s_{n,m}) (the paper's s ~ 1/(T^c + T^s), taken with factor 1:
rounds per second of one task). (5)-(6) are linearized exactly by the epigraph of a
minimization: p^max >= every group speed, p^min <= every group speed, D >= p^max - p^min.

What the paper leaves open, decided here:
* **Empty groups** are not allowed (``nonempty``): an empty group has speed 0, which only makes
  a job's spread worse, and a group with no GPU cannot run anything.
* **More groups than GPUs** is therefore infeasible: the model refuses it with an input error
  naming ``--groups``. U = 1 gives the trivial grouping with spread 0.
* **Ties**: groups are interchangeable, so the model fixes one labelling (``canonical_order``:
  groups are ordered by their lowest GPU index; GPU m can join group u only if a lower GPU opened
  group u-1). Any optimal grouping is reported, in that canonical form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pe

from hetsched.core.errors import InputError
from hetsched.core.reports import ValidationReport, Violation
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.view import hare_view
from hetsched.instance.model import Instance


def speeds(instance: Instance) -> np.ndarray:
    """s_{n,m} = 1 / (T^c_{n,m} + T^s_{n,m})."""
    return 1.0 / hare_view(instance).cycle


@dataclass(frozen=True)
class Grouping:
    gpu_ids: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict:
        return {"format": "hetsched.gpu_grouping/1", "groups": [list(g) for g in self.groups]}


def spread(instance: Instance, groups: list[list[int]]) -> float:
    """max_n (max_u - min_u) of the group speeds sum_{m in u} s_{n,m} (the objective of (4)-(6))."""
    s = speeds(instance)
    group_speed = np.array([[s[n, g].sum() for g in groups] for n in range(s.shape[0])])
    return float(np.max(group_speed.max(axis=1) - group_speed.min(axis=1)))


def build(instance: Instance, groups: int = 2) -> pe.ConcreteModel:
    s = speeds(instance)
    n_jobs, n_gpus = s.shape
    if groups > n_gpus:
        raise InputError(
            instance.name, "--groups", f"{groups} groups for {n_gpus} GPUs: every group needs a GPU"
        )
    m = pe.ConcreteModel(name=f"gpu_grouping[{instance.name}, U={groups}]")
    m.N = pe.Set(initialize=range(n_jobs))
    m.M = pe.Set(initialize=range(n_gpus))
    m.U = pe.Set(initialize=range(groups))
    m.z = pe.Var(m.M, m.U, domain=pe.Binary, doc="z_{m,u}: GPU m is in group u")
    m.p_max = pe.Var(m.N, doc="p_n^max")
    m.p_min = pe.Var(m.N, doc="p_n^min")
    m.D = pe.Var(domain=pe.NonNegativeReals, doc="max_n (p_n^max - p_n^min)")

    def group_speed(n, u):
        return sum(float(s[n, g]) * m.z[g, u] for g in m.M)

    m.objective = pe.Objective(expr=m.D)  # (4): min max_n (p_n^max - p_n^min)
    m.one_group = pe.Constraint(m.M, rule=lambda _, g: sum(m.z[g, u] for u in m.U) == 1)  # (4)
    m.speed_max = pe.Constraint(
        m.N, m.U, rule=lambda _, n, u: m.p_max[n] >= group_speed(n, u)
    )  # (5)
    m.speed_min = pe.Constraint(
        m.N, m.U, rule=lambda _, n, u: m.p_min[n] <= group_speed(n, u)
    )  # (6)
    m.spread = pe.Constraint(
        m.N, rule=lambda _, n: m.D >= m.p_max[n] - m.p_min[n]
    )  # (4) epigraph of the max
    m.nonempty = pe.Constraint(m.U, rule=lambda _, u: sum(m.z[g, u] for g in m.M) >= 1)
    m.canonical_order = pe.Constraint(
        [(g, u) for g in m.M for u in m.U if u >= 1],
        rule=lambda _, g, u: m.z[g, u] <= sum(m.z[h, u - 1] for h in m.M if h < g),
    )
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> Grouping:
    ids = tuple(g.id for g in instance.gpus)
    members: list[list[str]] = [[] for _ in m.U]
    for g in m.M:
        members[max(m.U, key=lambda u: value(m.z[g, u]))].append(ids[g])
    return Grouping(ids, tuple(tuple(x) for x in members))


def check(instance: Instance, grouping: Grouping) -> ValidationReport:
    """Every GPU in exactly one group, no empty group; the spread recomputed from the times."""
    index = {g.id: k for k, g in enumerate(instance.gpus)}
    bad = []
    seen: dict[str, int] = {}
    for u, group in enumerate(grouping.groups):
        if not group:
            bad.append(Violation("empty_group", f"group {u} has no GPU"))
        for gid in group:
            if gid not in index:
                bad.append(Violation("unknown_gpu", f"group {u}: unknown GPU '{gid}'"))
            elif gid in seen:
                bad.append(Violation("duplicate_gpu", f"GPU '{gid}' in groups {seen[gid]} and {u}"))
            seen.setdefault(gid, u)
    for gid in index:
        if gid not in seen:
            bad.append(Violation("missing_gpu", f"GPU '{gid}' is in no group"))
    value = None if bad else spread(instance, [[index[g] for g in grp] for grp in grouping.groups])
    return ValidationReport(not bad, value, {}, bad)


SPEC = FormulationSpec(
    name="gpu-grouping",
    kind="pyomo",
    build=build,
    extract=extract,
    validator=check,
    options=("groups",),
    summary="HLAS GPU grouping (TCC'24 (4)-(6)): min max_n speed spread over U groups, exact MILP (--groups U)",
)
