"""A Gantt chart of a task schedule (Hare's model): one row per GPU, each task's training interval
[start, start + T^c) as a bar coloured by job, its synchronization [.., + T^s) as a lighter,
hatched bar (the GPU is free again, eq. (8)), and each round's barrier (eq. (7): the instant its
last task has trained and synced) as a dashed line in the job's colour over the GPUs it used."""

from __future__ import annotations

from pathlib import Path

from hetsched.instance.model import Instance
from hetsched.plots.style import job_colours, pyplot, save
from hetsched.schedule.model import TaskSchedule


def draw_gantt(
    instance: Instance, schedule: TaskSchedule, path: str | Path, title: str | None = None
) -> Path:
    """Write the chart of ``schedule`` to ``path`` (PNG, SVG or PDF by its suffix)."""
    plt = pyplot()
    gpus = [g.id for g in instance.gpus]
    row = {g: k for k, g in enumerate(gpus)}
    colour = job_colours([j.id for j in instance.jobs])
    height = max(2.0, 0.45 * len(gpus) + 1.2)
    fig, ax = plt.subplots(figsize=(10, height))
    barrier: dict[tuple[str, int], tuple[float, list[int]]] = {}
    labelled: set[str] = set()
    for a in sorted(schedule.assignments):
        if a.gpu not in row or not instance.has_job(a.job):
            continue  # the validator reports these; the chart shows what it can place
        y = row[a.gpu]
        train = instance.train_time(a.job, a.gpu)
        sync = instance.sync_time(a.job, a.gpu)
        ax.barh(
            y,
            train,
            left=a.start,
            height=0.7,
            color=colour[a.job],
            edgecolor="black",
            linewidth=0.4,
            label=a.job if a.job not in labelled else None,
        )
        labelled.add(a.job)
        if sync > 0:
            ax.barh(
                y,
                sync,
                left=a.start + train,
                height=0.35,
                color=colour[a.job],
                alpha=0.35,
                hatch="///",
                edgecolor="grey",
                linewidth=0.3,
            )
        end, rows = barrier.get((a.job, a.round), (float("-inf"), []))
        barrier[(a.job, a.round)] = (max(end, a.start + train + sync), rows + [y])
        if train > 0.06 * _span(schedule, instance):
            ax.text(
                a.start + train / 2, y, f"{a.job} r{a.round}", ha="center", va="center", fontsize=7
            )
    for (job, _), (end, rows) in barrier.items():
        ax.vlines(
            end,
            min(rows) - 0.5,
            max(rows) + 0.5,
            colors=[colour[job]],
            linestyles="--",
            linewidth=2.0,
            zorder=3,
        )
        ax.plot([end], [min(rows) - 0.5], marker="v", color=colour[job], markersize=6, zorder=4)
    ax.set_yticks(range(len(gpus)), [f"{g.id} ({g.type})" for g in instance.gpus])
    ax.invert_yaxis()
    ax.set_xlabel("time")
    ax.set_xlim(left=0)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(
        title or f"{instance.name}: {len(schedule.assignments)} tasks (dashed: round barriers)"
    )
    if len(labelled) <= 20:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="job")
    fig.tight_layout()
    return save(fig, path, dpi=120)


def _span(schedule: TaskSchedule, instance: Instance) -> float:
    ends = [
        a.start + instance.train_time(a.job, a.gpu) + instance.sync_time(a.job, a.gpu)
        for a in schedule.assignments
        if instance.has_job(a.job) and instance.has_gpu(a.gpu)
    ]
    return max(ends, default=1.0) or 1.0
