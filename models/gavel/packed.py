"""Space-sharing (packed) variants of Gavel's policies (OSDI'20, Sec. 3.1, "space sharing"):
two jobs with the same scale factor may share GPUs, each at its measured co-located throughput.

Combinations c are single jobs {j} and pairs {j, j'} (same scale factor s, a positive pair
throughput on some type). Variables x_{c,r}: the share of time combination c runs on type r.

    job_time[j]:       sum_{c contains j} sum_r x_{c,r} <= 1
    type_capacity[r]:  sum_c s_c x_{c,r} <= N_r            (a pair holds s GPUs, not 2 s)
    thr_j(X) = sum_{c contains j} sum_r T^c_{j,r} x_{c,r}  (T^{{j}} isolated, T^{{j,j'}}_j co-located)

``gavel-max-min-fairness-perf-packed``: max min_j (s_j / w_j) thr_j(X) / thr_j(X^equal);
``gavel-max-throughput-packed``: max sum_j thr_j(X) / thr_j(X^equal). X^equal is the unpacked
equal share, so packed and unpacked objectives are on one scale, and the packed optimum is >=
the unpacked one (singletons are included). Option ``convention="gavel"`` takes Gavel's
packed normalizers: its ``PolicyWithPacking.flatten`` divides every job's throughputs by
sum_r T_{j,r}, and max-min fairness divides again by thr_j(X^prop) (so s_j / (w_j sum_r T_{j,r}
thr_j(X^prop)) per job; total throughput: 1 / sum_r T_{j,r}).

Pair throughputs come from Gavel's table (option ``throughputs``: its path, default the copy in ``data/gavel``), looked up by each
job's ``model.name`` and ``requested_workers``. Pairs grow as n^2: meant for up to a few hundred jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pyomo.environ as pe

from hetsched.core.errors import InputError
from hetsched.core.reports import ValidationReport, Violation
from hetsched.exact.spec import FormulationSpec
from hetsched.gavel.conventions import check_convention, fair_throughput
from hetsched.gavel.problem import AllocationView, allocation_view, equal_share_throughput
from hetsched.instance.gavel_table import load_throughputs
from hetsched.instance.model import Instance

TOL = 1e-7


@dataclass(frozen=True)
class Packing:
    """Combinations (tuples of job indices) and T[c, member, r], the throughput of each member."""

    view: AllocationView
    combos: tuple[tuple[int, ...], ...]
    thr: np.ndarray  # (n_combos, 2, n_types); second member unused for singletons
    scale: np.ndarray  # s_c


def packing(instance: Instance, throughputs: str | None = None) -> Packing:
    view = allocation_view(instance)
    table = load_throughputs(throughputs)
    keys = []
    for j, job in enumerate(instance.jobs):
        if job.model is None or not job.model.name:
            raise InputError(
                instance.name,
                f"$.jobs[{j}].model.name",
                "packing needs the job type to look up pair throughputs",
            )
        keys.append((job.model.name, int(view.scale[j])))
    combos, thr, scale = [], [], []
    for j in range(view.n_jobs):
        combos.append((j,))
        thr.append(np.stack([view.throughput[j], np.zeros(len(view.types))]))
        scale.append(view.scale[j])
    for j, k in combinations(range(view.n_jobs), 2):
        if view.scale[j] != view.scale[k]:
            continue
        pair = np.zeros((2, len(view.types)))
        for r, t in enumerate(view.types):
            entry = table.pairs.get(t, {}).get(keys[j], {}).get(keys[k])
            if entry is not None:
                pair[:, r] = entry
        if np.any(pair[0] > 0) and np.any(pair[1] > 0):
            combos.append((j, k))
            thr.append(pair)
            scale.append(view.scale[j])
    return Packing(view, tuple(combos), np.array(thr), np.array(scale))


@dataclass(frozen=True)
class PackedAllocation:
    policy: str
    packing: Packing
    x: np.ndarray  # (n_combos, n_types)
    instance: str = ""
    convention: str = "hetsched"

    def throughput(self) -> np.ndarray:
        out = np.zeros(self.packing.view.n_jobs)
        for c, members in enumerate(self.packing.combos):
            for pos, j in enumerate(members):
                out[j] += float(self.packing.thr[c, pos] @ self.x[c])
        return out

    def rows(self) -> list[tuple[str, dict[str, float]]]:
        """(the combination's jobs joined by '+', its share of each type) for every used combination."""
        v = self.packing.view
        return [
            (
                "+".join(v.job_ids[j] for j in c),
                {t: float(self.x[i, r]) for r, t in enumerate(v.types)},
            )
            for i, c in enumerate(self.packing.combos)
            if self.x[i].sum() > TOL
        ]

    def to_dict(self) -> dict:
        v = self.packing.view
        return {
            "format": "hetsched.packed_allocation/1",
            "policy": self.policy,
            "instance": self.instance,
            "allocation": [
                {
                    "jobs": [v.job_ids[j] for j in c],
                    **{t: float(self.x[i, r]) for r, t in enumerate(v.types)},
                }
                for i, c in enumerate(self.packing.combos)
                if self.x[i].sum() > TOL
            ],
            "effective_throughput": dict(zip(v.job_ids, self.throughput().tolist())),
        }


def per_job_coefficient(v: AllocationView, policy: str, convention: str) -> np.ndarray:
    """What each job's throughput is multiplied by in the objective (module doc)."""
    if policy == "max-min-fairness-perf":
        coef = v.scale / v.weight / fair_throughput(v, convention)
        return coef / v.throughput.sum(axis=1) if convention == "gavel" else coef
    if convention == "gavel":
        return 1 / v.throughput.sum(axis=1)
    return 1 / equal_share_throughput(v)


def build_for(policy: str):
    def build(
        instance: Instance, throughputs: str | None = None, convention: str = "hetsched"
    ) -> pe.ConcreteModel:
        p = packing(instance, throughputs)
        v = p.view
        coef = per_job_coefficient(v, policy, check_convention(convention))
        m = pe.ConcreteModel(name=f"{policy}_packed[{instance.name}]")
        m.C = pe.Set(initialize=range(len(p.combos)), doc="combinations: single jobs and pairs")
        m.R = pe.Set(initialize=range(len(v.types)))
        m.J = pe.Set(initialize=range(v.n_jobs))
        m.x = pe.Var(m.C, m.R, domain=pe.NonNegativeReals, doc="x_{c,r}")
        for c, r in [
            (c, r) for c in m.C for r in m.R if not np.all(p.thr[c, : len(p.combos[c]), r] > 0)
        ]:
            m.x[c, r].fix(0.0)  # a member cannot run there
        holding = {
            j: [c for c, members in enumerate(p.combos) if j in members] for j in range(v.n_jobs)
        }
        m.job_time = pe.Constraint(
            m.J, rule=lambda _, j: sum(m.x[c, r] for c in holding[j] for r in m.R) <= 1
        )
        m.type_capacity = pe.Constraint(
            m.R,
            rule=lambda _, r: sum(float(p.scale[c]) * m.x[c, r] for c in m.C) <= float(v.count[r]),
        )

        def thr(j):
            return sum(
                float(p.thr[c, p.combos[c].index(j), r]) * m.x[c, r]
                for c in holding[j]
                for r in m.R
            )

        if policy == "max-min-fairness-perf":
            m.z = pe.Var()
            m.fair = pe.Constraint(
                m.J, rule=lambda _, j: m.z <= float(coef[j]) * thr(j)
            )  # Gavel Sec. 4.1 epigraph, packed thr_j
            m.objective = pe.Objective(expr=m.z, sense=pe.maximize)  # Gavel Sec. 4.1: max min_j
        else:
            m.objective = pe.Objective(
                expr=sum(float(coef[j]) * thr(j) for j in m.J), sense=pe.maximize
            )  # Gavel Sec. 4.2
        m.packing = p
        m.convention = convention
        return m

    return build


def extract_for(policy: str):
    def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> PackedAllocation:
        x = np.array([[value(m.x[c, r]) for r in m.R] for c in m.C], dtype=float)
        return PackedAllocation(
            f"{policy}-packed", m.packing, np.clip(x, 0.0, None), instance.name, m.convention
        )

    return extract


def check_for(policy: str):
    def check(instance: Instance, alloc: PackedAllocation) -> ValidationReport:
        p, x = alloc.packing, alloc.x
        v = allocation_view(instance)
        bad = []
        if (
            x.shape != (len(p.combos), len(v.types))
            or not np.all(np.isfinite(x))
            or np.any(x < -TOL)
        ):
            return ValidationReport(
                False, None, {}, [Violation("bad_allocation", "shares must be finite and >= 0")]
            )
        for j in range(v.n_jobs):
            share = sum(x[c].sum() for c, members in enumerate(p.combos) if j in members)
            if share > 1 + TOL:
                bad.append(
                    Violation("time", f"job {v.job_ids[j]} runs {share:.6g} > 1 of the time")
                )
        used = p.scale @ x
        for r in np.flatnonzero(used > v.count + TOL * np.maximum(1, v.count)):
            bad.append(
                Violation("capacity", f"type {v.types[r]}: {used[r]:.6g} GPUs > {v.count[r]:g}")
            )
        if bad:
            return ValidationReport(False, None, {}, bad)
        thr = alloc.throughput() * per_job_coefficient(v, policy, alloc.convention)
        value = float(np.min(thr)) if policy == "max-min-fairness-perf" else float(thr.sum())
        return ValidationReport(True, value, {}, [])

    return check


SPECS = [
    FormulationSpec(
        name=f"gavel-{policy}-packed",
        kind="pyomo",
        build=build_for(policy),
        extract=extract_for(policy),
        validator=check_for(policy),
        sense="max",
        options=("throughputs", "convention"),
        summary=f"Gavel {policy} with space sharing over job pairs (pair throughputs), LP",
    )
    for policy in ("max-min-fairness-perf", "max-throughput")
]
