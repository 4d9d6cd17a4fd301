"""``hetsched show FILE``: what a result file holds, and its picture.

* a task schedule (``hetsched solve --out``, ``heuristic --out``): validated against its instance
  (``--instance``, else the shipped instance whose hash the schedule names), the objective
  recomputed, each GPU's tasks listed; ``--gantt PNG`` draws it;
* an audit report (``report.json`` of ``hetsched audit``): the verdict; ``--hist PNG`` draws the
  ratio histograms from its trial log.
"""

from __future__ import annotations

from pathlib import Path

from hetsched.core.errors import InputError
from hetsched.core.jsonio import read_json
from hetsched.core.resources import shipped_dir
from hetsched.instance.io import instance_hash, load_instance
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule, schedule_from_dict


def find_instance(
    schedule: TaskSchedule, source: str, search: tuple[Path, ...] | None = None
) -> Instance:
    """The shipped instance whose hash the schedule names."""
    if not schedule.instance_hash:
        raise InputError(
            source, "$.instance_hash", "the schedule names no instance hash: pass --instance"
        )
    if search is None:
        search = (shipped_dir("instances"), Path("instances"))
    seen: set[Path] = set()
    for root in search:
        if not root.is_dir() or root.resolve() in seen:
            continue
        seen.add(root.resolve())
        for path in sorted(root.rglob("*.json")):
            if path.name in ("manifest.json", "schema.json"):
                continue
            try:
                inst = load_instance(path)
            except Exception:  # not an instance file (audit reports, solutions): skip
                continue
            if instance_hash(inst) == schedule.instance_hash:
                return inst
    raise InputError(
        source,
        "$.instance_hash",
        f"no shipped instance has hash {schedule.instance_hash} ('{schedule.instance}'): pass --instance",
    )


def show(
    path: str | Path,
    instance: str | Path | None = None,
    gantt: str | Path | None = None,
    hist: str | Path | None = None,
) -> tuple[str, bool]:
    """(text to print, whether the file holds a valid result)."""
    source = str(path)
    data = read_json(Path(path))
    if isinstance(data, dict) and "claim" in data and "log" in data:
        return _show_audit(data, source, hist, gantt)
    schedule = schedule_from_dict(data, source)
    if hist is not None:
        raise InputError(
            source, "$", "--hist draws an audit report; this is a schedule (use --gantt)"
        )
    inst = load_instance(instance) if instance is not None else find_instance(schedule, source)
    return _show_schedule(inst, schedule, gantt)


def _show_schedule(inst: Instance, schedule: TaskSchedule, gantt) -> tuple[str, bool]:
    from hetsched.schedule.validate import validate

    report = validate(inst, schedule)
    lines = [
        f"instance {inst.name}: {len(inst.gpus)} GPUs, {len(inst.jobs)} jobs, {len(schedule.assignments)} tasks",
        f"valid: {report.valid}; sum w C = {report.objective}"
        if report.valid
        else f"INVALID: {len(report.violations)} violations",
    ]
    lines += [f"  {v.kind}: {v.message}" for v in report.violations[:20]]
    for g in inst.gpus:
        tasks = sorted(
            (a.start, a.job, a.round, a.task) for a in schedule.assignments if a.gpu == g.id
        )
        cells = " ".join(f"{j}/r{r}/t{k}@{s:g}" for s, j, r, k in tasks)
        lines.append(f"  {g.id} ({g.type}): {cells or '-'}")
    if report.completion:
        lines.append("completion: " + ", ".join(f"{j}={c:g}" for j, c in report.completion.items()))
    if gantt is not None:
        from hetsched.plots.gantt import draw_gantt

        lines.append(f"Gantt chart -> {draw_gantt(inst, schedule, gantt)}")
    return "\n".join(lines), bool(report.valid)


def _show_audit(report: dict, source: str, hist, gantt) -> tuple[str, bool]:
    if gantt is not None:
        raise InputError(
            source, "$", "--gantt draws a schedule; this is an audit report (use --hist)"
        )
    lines = [
        f"audit {report['claim']} ({report.get('profile')}, seed {report.get('seed')}): "
        f"{report.get('evaluated')} of {report.get('trials')} trials evaluated",
        f"worst ratio {report.get('worst_ratio')} vs bound {report.get('bound_at_worst')}; "
        f"violations: {report.get('violations')}",
    ]
    for c, e in (report.get("checks") or {}).items():
        lines.append(
            f"  step {c}: worst LHS/RHS {e.get('worst_lhs_over_rhs')}, violations {e.get('violations')}"
        )
    if hist is not None:
        from hetsched.plots.audit import draw_audit_histogram

        lines.append(f"ratio histograms -> {draw_audit_histogram(report, hist, source)}")
    return "\n".join(lines), True
