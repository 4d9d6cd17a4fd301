"""Proven lower bounds on what any policy can achieve on a workload (issue 19, item 2).

Both engines' models reduce to one relaxation. Job j arrives at a_j with weight w_j, needs U_j
units of work, runs at most s_j GPUs at once, turns one GPU-second of type r into e_{j,r} units,
and progresses at most 1/p_j of its work per second (p_j: the job alone on its best GPUs).

* Gang model (:mod:`hetsched.sim.gang_model`): U = W_j, e = X_j^r / s_j (a gang over several
  types runs at its slowest type's X, which is at most the mean of its GPUs' X), p = the job
  alone on its fastest gang.
* Gang model with packing (two jobs may share a gang, :mod:`hetsched.sim.gang_model`): a GPU of
  type r shared by j and k turns out f_jk + f_kj of solo GPU-seconds (f_jk: the fraction of
  its own rate j keeps beside k), so the capacity N_r is scaled by c_r = max(1, max f_jk + f_kj
  over the pairs of the workload that may share on r), and a job may run up to
  g_j = max(1, max_k f_jk) times its solo rate: its parallelism s_j and speed 1/p_j scale by g_j.
* Gang model with resized runs (``metadata.gang.resize``: a job may run on another GPU count or
  batch size, :mod:`hetsched.sim.gang_model`): e_{j,r} = the most units per GPU-second of any
  run of j on type r, s_j = the most of those GPU-seconds per second any run (alone or packed)
  turns out, p_j = the job at its fastest run, and a packed pair on n GPUs of type r scales N_r
  by its GPU-seconds of that efficiency over n. Every run's work then fits the relaxation.
* Harmony's workloads (``metadata.placement``): the gang model at each job's standalone speed;
  interference and communication only slow a job (:mod:`hetsched.sim.gang_interference`).
* Task model (Hare, eqs. (4)-(8)): U = |R_j| s_j tasks, e = 1 / (fastest train time of the type)
  (a GPU trains one task at a time; synchronization does not hold it), s = the tasks of a round
  (the barrier (7)), p = |R_j| x the fastest train + sync time (a round ends when its last task
  has synced).

Bounds, every one valid for every schedule of the model (restore delays and round boundaries
only delay jobs):

* ``alone``: C_j >= a_j + p_j; hence sum w_j C_j >= sum w_j (a_j + p_j) and
  makespan >= max_j (a_j + p_j) - min_j a_j.
* ``interval-lp`` (sum w_j C_j): time cut at breakpoints t_0 < ... < t_K plus [t_K, oo); u_{j,r,k}
  GPU-seconds of type r given to j in interval k. Capacity: sum_j u_{j,r,k} <= N_r |k|;
  parallelism: sum_r u_{j,r,k} <= s_j |k from a_j|; work: sum u e = U_j. The mean busy time
  M_j = int t f_j(t) dt (f_j: j's share of its work done per second, at most 1/p_j) is at least
  sum_k t_{k-1}^j y_{j,k} (y_{j,k}: share done in k, t_{k-1}^j = max(t_{k-1}, a_j)), and
  C_j >= M_j + p_j / 2 (the mass of f_j, at height at most 1/p_j, ends by C_j). For the task
  model p_j / 2 is replaced by |R_j| x (fastest train time) / 2, the bound on f_j there.
  Queyranne and Schulz's mean-busy-time relaxation, here with types and release dates.
* ``release-lp`` (makespan): min T such that, for each type r and each release date theta, the work of
  the jobs released at or after theta fits in N_r (T - theta), each job within s_j (T - a_j).

An LP value is lowered by 1e-6 relative before it is used, so a solver's tolerance cannot lift a
bound above the true optimum of the relaxation. LPs whose size passes ``MAX_LP_NONZEROS`` are
skipped and the bound says so.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.sparse import coo_matrix

from hetsched.instance.model import Instance
from hetsched.solvers.lp_arrays import ArrayLP, solve_array_lp
from hetsched.solvers.result import Status

MAX_LP_NONZEROS = 3_000_000
LP_VARIABLES = 200_000  # the interval LP's breakpoints shrink to keep about this many variables
SAFETY = 1e-6


@dataclass(frozen=True)
class BoundJobs:
    """The relaxation's data (module doc), one row per job."""

    arrival: np.ndarray
    weight: np.ndarray
    parallel: np.ndarray  # s_j
    rate: np.ndarray  # e[j, r], units per GPU-second of type r
    work: np.ndarray  # U_j
    alone: np.ndarray  # p_j
    tail: np.ndarray  # C_j - M_j >= tail_j
    count: np.ndarray  # N_r

    @property
    def n_jobs(self) -> int:
        return len(self.arrival)


@dataclass
class LowerBounds:
    """Lower bounds on the metrics of :func:`hetsched.sim.metrics.summarize`, with how each was found."""

    weighted_completion: float
    weighted_jct: float
    avg_jct: float
    makespan: float
    method: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "seconds": round(self.seconds, 3)}


def gang_bound_jobs(instance: Instance, packing: bool = False) -> BoundJobs:
    """The gang model as the relaxation's data; ``packing``: jobs may share gangs (module doc)."""
    from hetsched.sim.gang_model import gang_jobs

    d = gang_jobs(instance)
    alone = np.array([d.alone_seconds(j) for j in range(d.n_jobs)])
    count = d.type_count().astype(float)
    rate, parallel = d.throughput / d.gang[:, None], d.gang.astype(float)
    if d.resize != "none":
        return _resized_bound_jobs(d, rate, parallel, alone, count, packing)
    speedup = np.ones(d.n_jobs)
    if packing:
        capacity, speedup = _packing_gains(d)
        count, alone = count * capacity, alone / speedup
    return BoundJobs(
        arrival=d.arrival,
        weight=d.weight,
        parallel=parallel * speedup,
        rate=rate,
        work=d.work.astype(float),
        alone=alone,
        tail=alone / 2,
        count=count,
    )


def _resized_bound_jobs(d, rate, parallel, alone, count, packing: bool) -> BoundJobs:
    """The relaxation's data where jobs may run resized (module doc): e_{j,r} the best units
    per GPU-second of any run of j on type r; a run at v units/s turns out v / e_{j,r} of those
    GPU-seconds per second, so s_j is the most of any run, p_j the job at its fastest run (alone
    or packed), and a packed pair on n GPUs of type r scales N_r by its GPU-seconds over n."""
    runs = [
        [(r, int(d.gang[j]), None) for r in range(len(d.types)) if d.rows[j][r] > 0]
        + d.resized_runs(j)
        for j in range(d.n_jobs)
    ]
    speed = {
        (j, r, n, row): d.run_rate(j, d.gpus_of_type[r][:n], row)
        for j, mine in enumerate(runs)
        for r, n, row in mine
        if n <= count[r]
    }
    rate = rate.copy()
    for (j, r, n, _), v in speed.items():
        rate[j, r] = max(rate[j, r], v / n)
    fastest = np.zeros(d.n_jobs)
    for (j, r, _, _), v in speed.items():
        parallel[j] = max(parallel[j], v / rate[j, r])
        fastest[j] = max(fastest[j], v)
    capacity = np.ones(len(d.types))
    if packing:
        kinds: dict[tuple, int] = {}
        for j in range(d.n_jobs):
            kinds.setdefault((d.models[j], int(d.gang[j]), d.memory_gb[j]), j)
        members = {
            k: [j for j in range(d.n_jobs) if (d.models[j], int(d.gang[j]), d.memory_gb[j]) == k]
            for k in kinds
        }
        for ka, j in kinds.items():
            for kb, k in kinds.items():
                if ka == kb:
                    if len(members[ka]) < 2:
                        continue
                    k = members[ka][1]
                for r, n, row_j in runs[j]:
                    for r2, n2, row_k in runs[k]:
                        if (r2, n2) != (r, n) or n > count[r]:
                            continue
                        f = d.pair_rate(j, k, r, n, (row_j, row_k))
                        g = d.pair_rate(k, j, r, n, (row_k, row_j))
                        if f > 0 and g > 0:
                            capacity[r] = max(capacity[r], (f / rate[j, r] + g / rate[k, r]) / n)
                            for x in members[ka]:
                                parallel[x] = max(parallel[x], f / rate[j, r])
                                fastest[x] = max(fastest[x], f)
    with np.errstate(divide="ignore"):
        alone = np.minimum(alone, d.work / fastest)  # a job no run fits keeps its alone time
    return BoundJobs(
        arrival=d.arrival,
        weight=d.weight,
        parallel=parallel,
        rate=rate,
        work=d.work.astype(float),
        alone=alone,
        tail=alone / 2,
        count=count * capacity,
    )


def _packing_gains(d) -> tuple[np.ndarray, np.ndarray]:
    """(c_r, g_j) of the module doc, over the distinct kinds of job (what a pair depends on)."""
    kinds: dict[tuple, list[int]] = {}
    for j in range(d.n_jobs):
        kinds.setdefault((d.models[j], int(d.gang[j]), d.memory_gb[j]), []).append(j)
    groups = list(kinds.values())
    capacity = np.ones(len(d.types))
    speedup = np.ones(d.n_jobs)
    for a, mine in enumerate(groups):
        j, best = mine[0], 1.0
        for b, theirs in enumerate(groups):
            if a == b and len(mine) < 2:
                continue  # a job cannot share with itself
            k = theirs[1] if a == b else theirs[0]  # another job of that kind
            for r in range(len(d.types)):
                f, g = d.pair_fraction(j, k, r), d.pair_fraction(k, j, r)
                if f > 0 and g > 0:
                    capacity[r] = max(capacity[r], f + g)
                    best = max(best, f)
        speedup[mine] = best
    return capacity, speedup


def task_bound_jobs(instance: Instance) -> BoundJobs:
    """Hare's task model as the relaxation's data (module doc)."""
    from hetsched.hare.view import hare_view

    v = hare_view(instance)
    types = sorted(set(v.gpu_types))
    of_type = [np.array([t == u for u in v.gpu_types]) for t in types]
    # a "cannot run" train time (NEVER, 1e9 s) is a time like any other in this model
    fastest = np.stack([v.train[:, m].min(axis=1) for m in of_type], axis=1)  # [job, type]
    cycle = (v.train + v.sync).min(axis=1)
    tasks = (v.rounds * v.tasks_per_round).astype(float)
    return BoundJobs(
        arrival=v.arrival,
        weight=v.weight,
        parallel=v.tasks_per_round.astype(float),
        rate=1.0 / fastest,
        work=tasks,
        alone=v.rounds * cycle,
        tail=v.rounds * v.train.min(axis=1) / 2,
        count=np.array([m.sum() for m in of_type], dtype=float),
    )


def lower_bounds(jobs: BoundJobs, intervals: int | None = None) -> LowerBounds:
    """Every bound of the module doc on the metrics of a run of ``jobs``; ``intervals``
    breakpoints for the interval LP (default: 48, fewer for large workloads)."""
    t0 = time.process_time()
    if intervals is None:
        intervals = int(np.clip(LP_VARIABLES // jobs.rate.size, 8, 48))
    a, w = jobs.arrival, jobs.weight
    start = float(a.min())
    closed = float(np.sum(w * (a + jobs.alone)))
    closed_unit = float(np.sum(a + jobs.alone))
    span = float(np.max(a + jobs.alone))
    method = {"makespan": "alone", "weighted_completion": "alone", "avg_jct": "alone"}
    lp_span = _release_lp(jobs)
    if lp_span is None:
        method["makespan"] = "alone (release-lp skipped: too large)"
    elif lp_span > span:
        span, method["makespan"] = lp_span, "release-lp"
    grid = _breakpoints(jobs, start, max(span, start + 1e-9), intervals)
    weighted = _interval_lp(jobs, w, grid)
    if weighted is None:
        method["weighted_completion"] = "alone (interval-lp skipped: too large)"
    elif weighted > closed:
        closed, method["weighted_completion"] = weighted, "interval-lp"
    unit = weighted if np.all(w == 1.0) else _interval_lp(jobs, np.ones_like(w), grid)
    if unit is None:
        method["avg_jct"] = "alone (interval-lp skipped: too large)"
    elif unit > closed_unit:
        closed_unit, method["avg_jct"] = unit, "interval-lp"
    method["weighted_jct"] = method["weighted_completion"]
    return LowerBounds(
        weighted_completion=closed,
        weighted_jct=closed - float(np.sum(w * a)),
        avg_jct=(closed_unit - float(a.sum())) / jobs.n_jobs,
        makespan=span - start,
        method=method,
        seconds=time.process_time() - t0,
    )


def _breakpoints(jobs: BoundJobs, start: float, end: float, k: int) -> np.ndarray:
    """Half of the breakpoints evenly spread over [start, 2 end - start], half geometric from
    the shortest job (fine early, where most completions of a busy start fall)."""
    horizon = 2 * (end - start)
    shortest = max(float(jobs.alone.min()), horizon * 1e-6)
    even = start + np.linspace(0.0, horizon, k // 2 + 1)
    geo = start + np.geomspace(shortest, horizon, k - k // 2)
    return np.unique(np.concatenate([even, geo]))


def _interval_lp(jobs: BoundJobs, weight: np.ndarray, grid: np.ndarray) -> float | None:
    """Min sum weight_j C_j over the interval-indexed relaxation (module doc); None if too large."""
    n, n_types = jobs.rate.shape
    lo = np.append(grid[:-1], grid[-1])  # interval k = [lo_k, hi_k); the last one is unbounded
    hi = np.append(grid[1:], np.inf)
    k_count = len(lo)
    jj, rr, kk = np.nonzero(
        (jobs.rate[:, :, None] > 0) & (hi[None, None, :] > jobs.arrival[:, None, None])
    )
    nz = 5 * len(jj) + 2 * n
    if nz > MAX_LP_NONZEROS:
        return None
    nu = len(jj)
    begin = np.maximum(lo[kk], jobs.arrival[jj])  # when j may start in interval k
    frac = jobs.rate[jj, rr] / jobs.work[jj]  # share of j's work per GPU-second
    # variables: u (nu), then C (n); objective sum w C
    c = np.concatenate([np.zeros(nu), weight])
    rows, cols, vals, rhs = [], [], [], []
    row = 0
    finite = np.isfinite(hi[kk])
    # capacity: type r, interval k (finite)
    cap_index = rr * k_count + kk
    keys, cap_row = np.unique(cap_index[finite], return_inverse=True)
    rows.append(row + cap_row)
    cols.append(np.flatnonzero(finite))
    vals.append(np.ones(finite.sum()))
    rhs.append(jobs.count[keys // k_count] * (hi[keys % k_count] - lo[keys % k_count]))
    row += len(keys)
    # parallelism: job j, interval k (finite)
    par_index = jj * k_count + kk
    keys, par_row = np.unique(par_index[finite], return_inverse=True)
    rows.append(row + par_row)
    cols.append(np.flatnonzero(finite))
    vals.append(np.ones(finite.sum()))
    kj, kk2 = keys // k_count, keys % k_count
    rhs.append(jobs.parallel[kj] * (hi[kk2] - np.maximum(lo[kk2], jobs.arrival[kj])))
    row += len(keys)
    # C_j >= sum begin * frac * u + tail_j  ->  sum begin frac u - C_j <= -tail_j
    rows += [row + jj, row + np.arange(n)]
    cols += [np.arange(nu), nu + np.arange(n)]
    vals += [begin * frac, -np.ones(n)]
    rhs.append(-jobs.tail)
    row += n
    a_ub = coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(row, nu + n)
    ).tocsr()
    a_eq = coo_matrix((frac, (jj, np.arange(nu))), shape=(n, nu + n)).tocsr()  # work shares = 1
    lp = ArrayLP.from_inequalities(
        c,
        a_ub,
        np.concatenate(rhs),
        a_eq,
        np.ones(n),
        np.concatenate([np.zeros(nu), jobs.arrival + jobs.alone]),
        np.full(nu + n, np.inf),
        {"solver": "ipm"},  # 14x faster than simplex on the 480-job Philly window
    )
    return _optimum(lp, "the interval LP")


def _release_lp(jobs: BoundJobs) -> float | None:
    """Min T over the release-date relaxation (module doc); None if too large."""
    n, n_types = jobs.rate.shape
    jj, rr = np.nonzero(jobs.rate > 0)
    nu = len(jj)
    thetas, group = np.unique(jobs.arrival, return_inverse=True)  # release dates, job -> index
    g = len(thetas)
    if 4 * nu + 3 * g * n_types > MAX_LP_NONZEROS:
        return None
    # variables: u (nu), v[r, i] (g * n_types: work of type r released at or after theta_i), T
    nv = g * n_types
    t_col = nu + nv
    sel = np.arange(nu)
    chain = np.arange(nv)  # row and column offset of v[r, i]: r * g + i
    on = chain % g + 1 < g  # v[r, i + 1] exists
    # equalities, rows r * g + i: v[r,i] - v[r,i+1] - sum_{j released at theta_i} u[j,r] = 0;
    # then rows nv + j: work, sum_r e u[j, r] = U_j
    eq_rows = np.concatenate([chain, chain[on], rr * g + group[jj], nv + jj])
    eq_cols = np.concatenate([nu + chain, nu + chain[on] + 1, sel, sel])
    eq_vals = np.concatenate([np.ones(nv), -np.ones(on.sum()), -np.ones(nu), jobs.rate[jj, rr]])
    eq_rhs = np.concatenate([np.zeros(nv), jobs.work])
    # inequalities, rows r * g + i: capacity, v[r,i] - N_r T <= -N_r theta_i;
    # then rows nv + j: parallelism, sum_r u[j,r] - s_j T <= -s_j a_j
    count = np.repeat(jobs.count, g)
    rows = np.concatenate([chain, chain, nv + jj, nv + np.arange(n)])
    cols = np.concatenate([nu + chain, np.full(nv, t_col), sel, np.full(n, t_col)])
    vals = np.concatenate([np.ones(nv), -count, np.ones(nu), -jobs.parallel])
    rhs = np.concatenate([-count * np.tile(thetas, n_types), -jobs.parallel * jobs.arrival])
    nvar = t_col + 1
    c = np.zeros(nvar)
    c[t_col] = 1.0
    lower = np.zeros(nvar)
    lower[t_col] = float(np.max(jobs.arrival + jobs.alone))
    lp = ArrayLP.from_inequalities(
        c,
        coo_matrix((vals, (rows, cols)), shape=(len(rhs), nvar)),
        np.array(rhs),
        coo_matrix((eq_vals, (eq_rows, eq_cols)), shape=(len(eq_rhs), nvar)),
        np.array(eq_rhs),
        lower,
        np.full(nvar, np.inf),
        {},  # HiGHS's choice (the simplex method)
    )
    return _optimum(lp, "the release-date LP")


def _optimum(lp: ArrayLP, what: str) -> float:
    """The optimum of ``lp`` lowered by ``SAFETY`` (module doc). HiGHS runs as the solvers' array
    route does (:func:`~hetsched.solvers.lp_arrays.solve_array_lp`): a signal stops it."""
    raw = solve_array_lp(lp)
    if raw.status != Status.OPTIMAL or raw.objective is None:
        raise RuntimeError(f"{what} failed: {raw.log}")
    return float(raw.objective) * (1 - SAFETY)


#: the metrics of :func:`hetsched.sim.metrics.summarize` that have a bound here
BOUNDED = ("avg_jct", "weighted_completion", "weighted_jct", "makespan")


def workload_bounds(instance: Instance, level: str) -> LowerBounds:
    """The bounds for the runs of one engine on ``instance``: ``"job"`` (gang model),
    ``"job+packing"`` (gang model, jobs may share gangs) or ``"task"`` (Hare's model)."""
    if level == "task":
        return lower_bounds(task_bound_jobs(instance))
    return lower_bounds(gang_bound_jobs(instance, packing=level == "job+packing"))


def ratios(metrics: dict[str, float], bound: dict) -> dict[str, float]:
    """Each bounded metric of a run over its lower bound (at least 1 for a valid run)."""
    return {k: metrics[k] / bound[k] for k in BOUNDED if bound.get(k, 0) > 0}
