"""Hare_Sched (Hare, HPDC'22, eqs. (4)-(8)) as a Dantzig-Wolfe reformulation over job schedules.

A column s is one job's whole schedule: each task of each round on a GPU with a start tick,
obeying (4) arrival, (5) one GPU per task, (7) the round barrier and, among the job's own
tasks, (8). What the columns leave out is (8) between jobs, kept as a capacity row per GPU
and tick. With lambda_s = 1 when job n runs schedule s:

    min  sum_n sum_{s in S_n} w_n C_n(s) lambda_s                         sum_n w_n C_n
    s.t. sum_{s in S_n} lambda_s = 1                   for every job n    (5)-(7): one schedule per job
         sum_n sum_{s in S_n} u_{m,t}(s) lambda_s <= 1  for every GPU m, tick t   (8) no_overlap
         lambda_s in {0, 1}

u_{m,t}(s) = 1 if a task of s trains on GPU m during tick [t, t+1). The LP relaxation convexifies
each job's schedules, so a job's completion is the max over its tasks, never their average
(the weakness of the time-indexed LP of ``hare-sched-ti``): on ``ladder(24, 4)`` the bound is
160.0 against 132.5 for the time-indexed LP and 124 for CP-SAT after 30 s.

Pricing (:mod:`hetsched.hare.pricing`) finds a job's least priced schedule by dynamic
programming over its rounds. Solved by column generation (:mod:`hetsched.solvers.colgen`); the integer
master over the generated columns gives the schedule. The result is optimal only when it meets
the Lagrangian bound rounded up to the objective's grid; otherwise the gap is reported.

The root starts from the interval LP's capacity duals (``models/hare_interval_lp.py``), each
GPU tick priced at its class's price of a GPU-second over the tick (:func:`interval_prices`).
Every job schedule meets the LP's job rows, so at those prices each job's least priced column
costs at least its part of the LP: the first Lagrangian bound is already at least the interval
LP's (146.6 against 132.9 on ``ladder(24, 4)``), which keeps a root cut short by the clock far
above the per-job bound, and the smoothing starts from there.

Exactness: integer ticks as in ``hare-sched-ti`` (semi-active schedules start on integer ticks
when all times are integers; times are scaled by the least 10^d, d <= 4). Columns are limited to
the windows every schedule of objective <= UB obeys (UB from a list schedule,
:meth:`HareView.start_windows`), which keeps every optimal schedule.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.local_search import local_search_upper_bound
from hetsched.hare.pricing import INF, JobPricer
from hetsched.hare.ticks import SEARCH_SEED, extract_job_schedules, job_tasks, ticked_horizon
from hetsched.instance.model import Instance
from hetsched.models.hare_interval_lp import class_price_integrals
from hetsched.schedule.model import TaskSchedule
from hetsched.solvers.colgen import Column, DantzigWolfeProblem

MAX_PRICED_TICKS = 4_000  # a job window longer than this makes each pricing O(window^2) too slow
ROUNDING_EVALUATIONS = 5_000  # and again from the LP's round order after column generation
COLUMNS_PER_PRICING = 5  # a job's pricing returns its best schedules for this many completion times


MAX_TASKS = 5_000  # the windows' list-scheduling search and the per-job pricing DP grow past this


def too_large(instance: Instance) -> str | None:
    """Why column generation over job schedules would not get going (None: it would)."""
    if instance.n_tasks > MAX_TASKS:
        return f"it has {instance.n_tasks} tasks (limit {MAX_TASKS} for column generation over job schedules)"
    return None


def build(
    instance: Instance,
    hint: TaskSchedule | None = None,
    prove: bool = False,
    shrink_nodes: bool = False,
    strong_branching: int | None = None,
) -> DantzigWolfeProblem:
    """The master and its pricing; ``hint``: a schedule of ``instance`` (from Python, e.g. the
    portfolio's best so far) that sets the windows and the first incumbent when it is better than
    the local search's; ``prove``: spend the time on the bound (no dive, no integer master, which
    look for schedules: branch-and-price from the root); ``shrink_nodes``: the nodes shed columns
    as the root does (faster nodes, other branchings: docs/benchmarks.md, session 50);
    ``strong_branching``: how many cost splits branching compares by their children's LPs (1:
    the most balanced, unscored; default the engine's)."""
    for name, value in (("prove", prove), ("shrink_nodes", shrink_nodes)):
        if not isinstance(value, bool):
            raise HetschedError(f"option {name}: true or false (got {value!r})")
    if strong_branching is not None and (
        isinstance(strong_branching, bool)
        or not isinstance(strong_branching, int)
        or strong_branching < 1
    ):
        raise HetschedError(
            f"option strong_branching: a whole number >= 1 (got {strong_branching!r})"
        )
    th = ticked_horizon(instance, hint, "hare-sched (colgen)")
    s, ws, ticked, v, start, weight = (
        th.scale,
        th.weight_scale,
        th.ticked,
        th.view,
        th.schedule,
        th.weight,
    )
    c_hi, horizon = th.completion_hi, th.horizon
    G = v.n_gpus
    pricers = []
    for n in range(v.n_jobs):
        R = int(v.rounds[n])
        lo = th.ready_lo(n)
        if c_hi[n] - lo[0] > MAX_PRICED_TICKS:
            raise HetschedError(
                f"hare-sched (colgen): job {v.job_ids[n]} spans {c_hi[n] - lo[0]} ticks of 1/{s} s "
                f"(limit {MAX_PRICED_TICKS}); use --solver cpsat"
            )
        pricers.append(
            JobPricer(
                train=v.train[n].astype(np.int64),
                cycle=v.cycle[n].astype(np.int64),
                tasks_per_round=int(v.tasks_per_round[n]),
                rounds=R,
                weight=float(weight[n]),
                arrival=int(v.arrival[n]),
                ready_lo=lo,
                ready_hi=th.ready_hi(n),
                completion_hi=int(c_hi[n]),
                horizon=horizon,
            )
        )

    def column(n: int, tasks: list[tuple[int, int, int]], completion: int) -> Column:
        rows = [
            g * horizon + t
            for _, g, start in tasks
            for t in range(start, start + int(v.train[n, g]))
        ]
        return Column(
            n, float(weight[n] * completion), np.array(rows, dtype=np.int64), tuple(tasks)
        )

    def prepare(pi: np.ndarray) -> np.ndarray:  # prefix sums of the tick prices, per GPU
        P = np.zeros((G, horizon + 1))
        P[:, 1:] = np.cumsum(pi.reshape(G, horizon), axis=1)
        return P

    def price(
        n: int, P: np.ndarray, cost_lo: float = -np.inf, cost_hi: float = np.inf
    ) -> tuple[float, list[Column]]:
        """Job n's least priced schedule whose cost w_n C_n lies in (cost_lo, cost_hi], then the
        least priced ones with the next COLUMNS_PER_PRICING - 1 best completion times."""
        c_lo = 0 if cost_lo == -np.inf else int(np.floor(cost_lo / weight[n] + 1e-9)) + 1
        c_hi = None if cost_hi == np.inf else int(np.floor(cost_hi / weight[n] + 1e-9))
        priced = pricers[n].price_by_completion(P, c_lo, c_hi, COLUMNS_PER_PRICING)
        if not priced:  # no schedule of job n in this branch
            return INF, []
        return priced[0][0], [column(n, tasks, completion) for _, tasks, completion in priced]

    def columns_of(schedule) -> list[Column] | None:
        """One column per job from a schedule in ticks; None if a task leaves the priced horizon."""
        jobs = job_tasks(v, schedule)
        for n, (tasks, _) in enumerate(jobs):
            if any(start + int(v.train[n, g]) > horizon for _, g, start in tasks):
                return None
        return [column(n, tasks, done) for n, (tasks, done) in enumerate(jobs)]

    def round_lp(columns: list[Column], lam: np.ndarray) -> list[Column] | None:
        """List schedules from the LP's order: each round's lambda-weighted mean start."""
        first_round = np.concatenate(([0], np.cumsum(v.rounds)[:-1]))
        prio = np.zeros(int(np.sum(v.rounds)))
        for col, x in zip(columns, lam):
            if x > 1e-9:
                starts: dict[int, int] = {}
                for r, _, start in col.payload:
                    starts[r] = min(start, starts.get(r, start))
                for r, start in starts.items():
                    prio[first_round[col.block] + r] += x * start
        _, schedule = local_search_upper_bound(
            ticked, ROUNDING_EVALUATIONS, SEARCH_SEED, round_priorities=prio
        )
        return columns_of(schedule)

    initial = columns_of(start)  # the best schedule known, one column per job: a feasible start
    assert initial is not None  # its objective is UB, so every job ends within its window
    start_prices, bound_note = interval_prices(instance, s * ws, s, G, horizon)

    return DantzigWolfeProblem(
        n_blocks=v.n_jobs,
        capacity=np.ones(G * horizon),
        exclusive_rows=True,  # a GPU-tick trains one task: no two jobs share a row
        price=price,
        prepare=prepare,
        initial=initial,
        round_lp=round_lp,
        objective_divisor=float(s * ws),
        lower_bound=th.per_job_bound,  # (4), (6), (7): C_n >= a_n + |R_n| L_n
        objective_step=1.0,
        exact=True,
        notes=[
            f"times scaled by {s} to integer ticks; columns: job schedules within the windows of "
            f"UB {th.ub / (s * ws):g} ({th.source})",
            bound_note,
        ],
        data={"scale": s, "view": v},
        dive=not prove,
        integer_master=not prove,
        shrink_nodes=shrink_nodes,
        **({} if strong_branching is None else {"strong_branching": strong_branching}),
        initial_prices=start_prices,
        # Pessoa et al.'s adaptive smoothing: a root cut short by the clock ends higher
        # (ladder(48, 4) at 30 s: 406.7-413.4 against 401.8-405.6 at a fixed 0.8)
        auto_smoothing=True,
    )


def interval_prices(
    instance: Instance, unit: float, s: float, G: int, horizon: int
) -> tuple[np.ndarray | None, str]:
    """Prices of every (GPU, tick) row from the interval LP's capacity duals
    (``models/hare_interval_lp.py``): a tick costs the LP's price of a GPU-second of the GPU's
    class, integrated over the tick's second(s) (``unit``: the master's cost of one unit of the
    LP's objective, ``s`` ticks a second). At these prices every job's least priced schedule
    costs at least its part of the LP, so the first Lagrangian bound is at least the interval
    LP's (None, with the reason, where that LP has no optimum)."""
    solved = class_price_integrals(instance, np.arange(horizon + 1) / s)  # tick t: [t/s, (t+1)/s)
    if solved is None:
        return None, "interval LP not solved: no start prices"
    classes, integrals, value = solved
    prices = np.zeros((G, horizon))
    for c, gpus in enumerate(classes):
        prices[gpus] = unit * integrals[c]
    return prices.ravel(), f"first prices: the interval LP's capacity duals (its bound {value:.6g})"


SPEC = FormulationSpec(
    name="hare-sched",
    kind="colgen",
    build=build,
    extract=extract_job_schedules,
    summary="Hare_Sched (4)-(8) as a Dantzig-Wolfe master over job schedules: column generation, "
    "Lagrangian bound, integer master over the columns",
    supports=too_large,
    options=("hint", "prove", "shrink_nodes", "strong_branching"),
)
