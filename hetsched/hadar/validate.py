"""The independent check of Hadar decisions w_{jh}^r(t) (P1, (1a)-(1e)), recomputing each job's
finish slot (1c), JCT and utility from the instance alone.

Decisions: ``{job_id: {slot: {(machine_id, gpu_type): count}}}``; slots are 1-based.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hetsched.core.reports import Violation
from hetsched.hadar.utility import utility
from hetsched.hadar.view import HadarView, hadar_view
from hetsched.instance.model import Instance

TOL = 1e-9


@dataclass
class HadarReport:
    valid: bool
    utility: float  # sum over finished jobs of U_j (the objective of P1)
    finish: dict[str, int] = field(default_factory=dict)  # f_j of finished jobs
    jct: dict[str, float] = field(default_factory=dict)
    done: dict[str, float] = field(default_factory=dict)  # iterations completed
    utility_of: dict[str, float] = field(default_factory=dict)  # U_j of finished jobs
    violations: list[Violation] = field(default_factory=list)


def validate_decisions(
    instance: Instance, decisions: dict, utility_name: str | None = None, require_all: bool = False
) -> HadarReport:
    v: HadarView = hadar_view(instance)
    bad: list[Violation] = []
    jobs = {jid: j for j, jid in enumerate(v.job_ids)}
    mach = {m: h for h, m in enumerate(v.machines)}
    typ = {t: r for r, t in enumerate(v.types)}
    used: dict[tuple[int, int, int], int] = {}
    report = HadarReport(True, 0.0)
    for jid, slots in decisions.items():
        if jid not in jobs:
            bad.append(Violation("unknown_job", f"unknown job '{jid}'"))
            continue
        j = jobs[jid]
        done, last = 0.0, None
        for t in sorted(slots):
            alloc = {k: n for k, n in slots[t].items() if n}
            if not alloc:
                continue
            if not 1 <= t <= v.horizon:
                bad.append(Violation("slot", f"{jid}: slot {t} outside 1..{v.horizon}"))
            if t < v.arrival[j]:
                bad.append(
                    Violation(
                        "arrival",
                        f"{jid}: runs in slot {t} before it arrives (slot {v.arrival[j]}) (1e)",
                    )
                )
            total = 0
            kinds = []
            for (m, gt), n in alloc.items():
                if m not in mach or gt not in typ or n < 0 or int(n) != n:
                    bad.append(
                        Violation("unknown_gpu", f"{jid} slot {t}: bad allocation {m}/{gt} x {n}")
                    )
                    continue
                key = (mach[m], typ[gt], t)
                used[key] = used.get(key, 0) + int(n)
                total += int(n)
                kinds.append(typ[gt])
            last = t  # (1c): f_j is the last slot with a nonzero allocation
            if total != v.workers[j]:
                bad.append(
                    Violation(
                        "gang", f"{jid} slot {t}: {total} GPUs, gang needs 0 or {v.workers[j]} (1e)"
                    )
                )
                continue
            done += v.rate(j, kinds, total)
        report.done[jid] = done
        if done >= v.work[j] * (1 - 1e-12) and last is not None:
            report.finish[jid] = last
            jct = v.jct(j, last)
            report.jct[jid] = jct
            report.utility_of[jid] = utility(v, utility_name, j, jct)
            report.utility += report.utility_of[jid]
        elif require_all:
            bad.append(
                Violation("progress", f"{jid}: {done:.6g} of {v.work[j]:.6g} iterations (1a)")
            )
    for (h, r, t), n in used.items():
        if n > v.capacity[h, r]:
            bad.append(
                Violation(
                    "capacity",
                    f"slot {t}: {n} {v.types[r]} GPUs on {v.machines[h]} > {v.capacity[h, r]} (1d)",
                )
            )
    report.valid = not bad
    report.violations = bad
    return report
