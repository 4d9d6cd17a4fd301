"""Hare_Sched (Hare, HPDC'22, (4)-(8)) over machine schedules, where every job is one round of one
task and all jobs arrive together: P|Q|R || sum w_j C_j with synchronization constants, in the
set-partitioning form of van den Akker, Hoogeveen & van de Velde (Oper. Res. 47, 1999):

    min  sum_s c_s lambda_s                       c_s = sum_{j in s} w_j (a + T_j(s) + T^s_{j,k(s)})
    s.t. sum_{s ni j} lambda_s = 1     for every job j        (5): each task on one GPU
         sum_{s in S_k} lambda_s <= m_k  for every class k    GPUs of class k
         lambda_s in {0, 1}

A column s is one GPU's sequence in Smith's order without idle time, so (4) arrival and (8)
no_overlap hold inside it; (6) completion is its cost and (7) has no second round to order.
Solved by branch-and-price (:mod:`hetsched.solvers.colgen.machines`), pricing by dynamic programming
over the GPU's time. ``--solver auto`` picks it wherever it applies.
"""

from __future__ import annotations

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskAssignment, TaskSchedule
from hetsched.solvers.colgen.machines import (
    MachineProblem,
    MachineSolution,
    machine_problem,
    unsupported_reason,
)


def build(instance: Instance) -> MachineProblem:
    try:
        return machine_problem(instance)
    except ValueError as exc:
        raise HetschedError(
            f"hare-sched over machine schedules does not apply: {exc}; use --solver auto"
        ) from None


def extract(problem: MachineProblem, instance: Instance, solution: MachineSolution) -> TaskSchedule:
    """Each column on its own GPU of its class, re-timed in seconds from the order: a task starts
    when the previous one ends (or at its tick, if later), so no float round-off overlaps two."""
    out = []
    used = [0] * problem.n_classes
    a = instance.jobs[0].arrival
    for col in solution.columns:
        gpu = problem.class_gpus[col.klass][used[col.klass]]
        used[col.klass] += 1
        free = a
        for j, end in zip(col.jobs.tolist(), col.ends.tolist()):
            job = problem.job_ids[j]
            start = max(free, a + (end - int(problem.p[j, col.klass])) / problem.time_scale)
            out.append(TaskAssignment(job, 0, 0, gpu, start))
            free = start + instance.train_time(job, gpu)
    return TaskSchedule.of(out, instance.name, instance_hash(instance))


SPEC = FormulationSpec(
    name="hare-sched",
    kind="machine-schedules",
    build=build,
    extract=extract,
    supports=unsupported_reason,
    summary="Hare_Sched with one-task jobs and a common arrival (P|Q|R||sum w_j C_j): branch-and-price over "
    "machine schedules (van den Akker et al. 1999)",
)
