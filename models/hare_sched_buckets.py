"""Hare_Sched (Hare, HPDC'22, eqs. (4)-(8)): a lower bound from a Dantzig-Wolfe master over job
schedules whose capacity rows are per GPU class and time bucket.

A column s is one job's whole schedule, as in ``models/hare_sched_dw.py``: every task of every
round on a GPU with a start tick, obeying (4) arrival, (5) one GPU per task, (7) the round
barrier and (8) among the job's own tasks. (8) between jobs is relaxed to its aggregate: in
every bucket b = [b B, (b + 1) B) of ticks, the jobs' tasks train on the m_c GPUs of class c
(GPUs with the same times for every job) for at most m_c |b| GPU-ticks:

    min  sum_n sum_{s in S_n} w_n C_n(s) lambda_s                          sum_n w_n C_n
    s.t. sum_{s in S_n} lambda_s = 1                   for every job n      (5)-(7): one schedule each
         sum_n sum_s u_{c,b}(s) lambda_s <= m_c |b|    for every class c, bucket b   (8) summed
         lambda_s >= 0

u_{c,b}(s): the ticks of bucket b in which a task of s trains on a GPU of class c. Every
schedule meets the rows, so the LP's optimum, and every Lagrangian bound
L(pi) = sum_n min_s (w_n C_n(s) + pi . u(s)) - pi . capacity with pi >= 0, is a lower bound of
Hare_Sched. The master keeps what the interval LP's fluid rate rows lose -- a job's completion
is its last round's end, each round lasts as long as its tasks really take, its rounds follow
one another -- and gives up only which GPU of a class and which tick within a bucket a task
holds. On hare-table2 6 x 8 cut to 1/20 of its rounds (90 tasks), priced exactly, it is 75.54
with buckets of 0.1 s, against 74.23 for the interval LP and 75.61-75.77 for the per-GPU,
per-tick master after 900 s; with the pricing below and buckets of 0.5 s, 75.36 in 14 s.

Pricing (:mod:`hetsched.hare.bucket_pricing`) is a lower bound of each job's least priced
schedule, by a DP over (round, tick) whose cost grows linearly in the job's window (the per-tick
DP of ``hare-sched`` is quadratic there, which keeps it under 4,000 ticks): the Lagrangian bound
stays valid, and every column it returns is a real job schedule that the master prices exactly.
The root starts from the interval LP's capacity duals (each bucket at the mean of its ticks'),
so its first bound is already near the LP's.

With ``dead_gaps``, a column is also charged with the ticks between its tasks on a GPU that no
other job can use (:mod:`hetsched.hare.dead_gaps`: the rows stay valid). The pricing does not
charge them yet, so the Lagrangian bound is then valid but below the master's LP (hare-table2
6 x 8 at 500 s: LP 495.5 against 466.7 without, Lagrangian bound 449.9 against 458.6).

This model proves bounds only: an integer
solution of the master need not be a schedule, so its schedule is the one it started from (the
given hint, or a local search of list schedules), and the status is ``optimal`` only where the
bound meets that schedule.
"""

from __future__ import annotations

import math

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.bucket_pricing import INF, BucketPricer
from hetsched.hare.dead_gaps import dead_gaps as gaps_of
from hetsched.hare.ticks import extract_job_schedules, job_tasks, ticked_horizon
from hetsched.instance.model import Instance
from hetsched.models.hare_interval_lp import class_price_integrals
from hetsched.schedule.model import TaskSchedule
from hetsched.solvers.colgen import Column, DantzigWolfeProblem

#: with no bucket given: the horizon in at most MAX_BUCKETS buckets (the master's rows per
#: class), each at least MIN_BUCKET seconds. On hare-table2 seed 0: 6 x 8 at 1 s reached 453.4
#: in 150 s, at 0.58 s 449.98 in 60 s and 452.7 in the portfolio's 480 s; 20 x 16 at 4.29 s
#: 3,687, at 1, 2 and 11.4 s 3,678, 3,680 and 3,627
MAX_BUCKETS = 400
MIN_BUCKET = 1.0
COLUMNS_PER_PRICING = 5  # a job's pricing returns its best schedules for this many completion times
MAX_TASKS = 100_000  # the pricing's (round, tick) table of the largest job grows past this


def too_large(instance: Instance) -> str | None:
    if instance.n_tasks > MAX_TASKS:
        return f"it has {instance.n_tasks} tasks (limit {MAX_TASKS} for the bucketed master)"
    return None


def build(
    instance: Instance,
    hint: TaskSchedule | None = None,
    bucket: int | None = None,
    dead_gaps: bool = False,
) -> DantzigWolfeProblem:
    """The bucketed master and its pricing; ``hint``: a schedule of ``instance`` (e.g. the
    portfolio's best) that sets the windows where it is better than a few list schedules (with
    no hint: a local search of list schedules);
    ``bucket``: ticks per bucket (default: the horizon over :data:`MAX_BUCKETS`, at least
    :data:`MIN_BUCKET` seconds); ``dead_gaps``: charge each column with the ticks between its
    tasks that no other job can use (:mod:`hetsched.hare.dead_gaps`; the pricing does not charge
    them yet, so its Lagrangian bound is valid but falls short of the master's LP)."""
    if not isinstance(dead_gaps, bool):
        raise HetschedError(f"option dead_gaps: true or false (got {dead_gaps!r})")
    if bucket is not None and (
        isinstance(bucket, bool) or not isinstance(bucket, int) or bucket < 1
    ):
        raise HetschedError(f"option bucket: a whole number of ticks >= 1 (got {bucket!r})")
    # a given schedule (the portfolio's best) sets the windows; no search of its own then
    th = ticked_horizon(instance, hint, "hare-sched-buckets", 0 if hint is not None else None)
    v, s, H = th.view, th.scale, th.horizon
    B = bucket if bucket is not None else max(1, math.ceil(H / MAX_BUCKETS), int(s * MIN_BUCKET))
    nb = -(-H // B)
    length = np.minimum(B, H - B * np.arange(nb))  # ticks in each bucket
    classes = [np.array(c, dtype=np.int64) for c in v.gpu_classes()]
    C = len(classes)
    class_of = np.empty(v.n_gpus, dtype=np.int64)
    for c, gpus in enumerate(classes):
        class_of[gpus] = c
    first = [int(g[0]) for g in classes]
    pricers = [
        BucketPricer(
            train=v.train[n, first].astype(np.int64),
            sync=v.sync[n, first].astype(np.int64),
            class_gpus=tuple(classes),
            tasks_per_round=int(v.tasks_per_round[n]),
            rounds=int(v.rounds[n]),
            weight=float(th.weight[n]),
            arrival=int(v.arrival[n]),
            ready_lo=th.ready_lo(n),
            ready_hi=th.ready_hi(n),
            completion_hi=int(th.completion_hi[n]),
            tail=th.round_tails(n),
            bucket=B,
        )
        for n in range(v.n_jobs)
    ]

    train = np.rint(v.train).astype(np.int64)
    arrival = np.rint(v.arrival).astype(np.int64)

    def column(n: int, tasks: list[tuple[int, int, int]], completion: int) -> Column:
        """Job n's schedule as a column: the ticks its tasks train in each (class, bucket), and
        with ``dead_gaps`` the ticks between them that no other job can use."""
        used = np.zeros(C * nb)
        spans = [(g, start, start + int(train[n, g])) for _, g, start in tasks]
        if dead_gaps:
            spans += gaps_of(train, arrival, th.completion_hi, n, tasks)
        for g, start, end in spans:
            row = class_of[g] * nb
            for b in range(start // B, (end - 1) // B + 1):
                used[row + b] += min(end, (b + 1) * B) - max(start, b * B)
        rows = np.flatnonzero(used)
        return Column(n, float(th.weight[n] * completion), rows, tuple(tasks), used[rows])

    initial = [column(n, tasks, done) for n, (tasks, done) in enumerate(job_tasks(v, th.schedule))]
    curves: dict[int, np.ndarray] = {}  # per job, its last pricing's bound per completion tick
    incumbent = float(sum(c.cost for c in initial))

    def narrow(bound: float) -> None:
        """Reduced-cost fixing: a schedule of objective below the incumbent gives each job a
        column of reduced cost below incumbent - L(pi) at the prices of the bound L(pi), so C_n
        can only be a tick where the job's curve from that round stays under it."""
        for n, curve in curves.items():
            keep = np.flatnonzero(curve - curve.min() < incumbent - bound - 1e-9 * incumbent)
            if len(keep):
                pricers[n] = pricers[n].narrowed(int(pricers[n].arrival) + int(keep.max()))

    def price(
        n: int, pi: np.ndarray, cost_lo: float = -np.inf, cost_hi: float = np.inf
    ) -> tuple[float, list[Column]]:
        priced, curves[n] = pricers[n].price_by_completion(pi, COLUMNS_PER_PRICING)
        if not priced:
            return INF, []
        return priced[0][0], [column(n, tasks, completion) for _, tasks, completion in priced]

    unit = float(s * th.weight_scale)
    start_prices, note = _start_prices(instance, unit, s, B, nb, length, C)
    return DantzigWolfeProblem(
        n_blocks=v.n_jobs,
        capacity=(np.array([len(g) for g in classes])[:, None] * length[None, :]).ravel(),
        price=price,
        prepare=lambda pi: pi.reshape(C, nb),
        initial=initial,
        objective_divisor=unit,
        lower_bound=th.per_job_bound,  # (4), (6), (7): C_n >= a_n + |R_n| L_n
        objective_step=1.0,
        exact=True,
        notes=[
            f"times scaled by {s} to integer ticks; {C} GPU classes x {nb} buckets of {B} ticks; "
            f"columns: job schedules within the windows of UB {th.ub / unit:g} ({th.source})",
            note,
        ],
        data={"scale": s, "view": v},
        dive=False,  # a selection of columns within the aggregate rows need not be a schedule
        integer_master=False,
        branch=False,
        initial_prices=start_prices,
        auto_smoothing=True,
        on_root_bound=narrow,
    )


def _start_prices(
    instance: Instance, unit: float, s: int, B: int, nb: int, length: np.ndarray, C: int
) -> tuple[np.ndarray | None, str]:
    """Each (class, bucket) row at the interval LP's capacity dual of the class, averaged over
    the bucket's ticks (``unit``: the master's cost of one unit of the LP's objective)."""
    edges = np.minimum(B * np.arange(nb + 1), B * (nb - 1) + length[-1]) / s
    solved = class_price_integrals(instance, edges)
    if solved is None:
        return None, "interval LP not solved: no start prices"
    classes, integrals, value = solved
    if len(classes) != C:  # pragma: no cover - both group the GPUs by the view's times
        return None, "interval LP's classes differ: no start prices"
    return (unit * integrals / length[None, :]).ravel(), (
        f"first prices: the interval LP's capacity duals (its bound {value:.6g})"
    )


SPEC = FormulationSpec(
    name="hare-sched-buckets",
    kind="colgen",
    build=build,
    extract=extract_job_schedules,
    summary="Hare_Sched (4)-(8): a lower bound from job-schedule columns under capacity rows per "
    "GPU class and time bucket (the schedule is the one it starts from)",
    supports=too_large,
    options=("hint", "bucket", "dead_gaps"),
)
