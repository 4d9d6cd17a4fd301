"""An interval-indexed LP lower bound for Hare_Sched at cluster scale (after Hall, Schulz,
Shmoys and Wein's interval-indexed LP for sum w_j C_j, adapted to Hare's rounds).

Hare_Sched_RL (9) has |D|^2 |M| products and is hopeless at 200 jobs x 160 GPUs. This LP
treats each job as training *progress* (one unit per task) that GPUs produce over time, and
keeps only what every feasible schedule of Hare_Sched (4)-(8) must satisfy:

Intervals I_l = (tau_{l-1}, tau_l], geometric: tau_l = tau_0 + delta (1 + eps)^(l-1), tau_0 =
min_n a_n, delta = the least min_m (T^c + T^s) of any job, up to tau_L >= max_n C^ub_n (the
completion bound every optimal schedule meets, :meth:`HareView.completion_upper_bounds`).
GPUs with identical columns of T^c and T^s form a class c of s_c GPUs.

    z_{n,c,l} >= 0   progress of job n on class c in I_l (a task run on a GPU of class c for
                     T^c_{n,c} is one unit), only for l with tau_l > a_n and tau_{l-1} < C^ub_n
    all_work:        sum_{c,l} z_{n,c,l} = |R_n| |D_r|                            (every task, (5))
    capacity:        sum_n T^c_{n,c} z_{n,c,l} <= s_c |I_l|          (a GPU trains one task, (8))
    parallelism:     sum_c T^c_{n,c} z_{n,c,l} <= |D_r| (tau_l - l_{n,l}),  l_{n,l} = max(tau_{l-1}, a_n)
                     (only one round of job n runs at a time, (7), and it has |D_r| tasks)
    mean_busy:       C_n >= (1/N_n) sum_{c,l} l_{n,l} z_{n,c,l} + T^s_min + T^c_min / 2 + (|R_n| - 1) L_n / 2
    rate:            C_n >= a_n + alpha . sum_l z_{n,.,l}       for each facet alpha of Q_n
    chain:           C_n >= a_n + |R_n| L_n                              (bound of the variable C_n)
    min sum_n w_n C_n

rate, proved: job n's rounds run one after another inside [a_n, C_n] ((4), (7)), and rounds that
last A seconds in all train a task vector (tasks per GPU class) in A Q_n, the job's rate region
(:mod:`hetsched.hare.rates`: a round that splits its tasks as k over the classes lasts at least
d(k), by (6)-(8)); alpha . x <= 1 on Q_n, so alpha . (all of job n's progress) <= C_n - a_n. It is
what the fluid rows miss: a job on 6 slow GPUs progresses at 3.77 tasks/s in them and at 3.0 with
its barrier (issue 44); on hare-table2 it raised the bound 1.9% at 6 x 8, 3.6% at 20 x 16 and
1.3% at 200 x 160 (seed 2), for 1 to 4 rows a job. A job whose Q_n is too large to enumerate
(:data:`hetsched.hare.rates.MAX_POINTS`) gets no rate row.

mean_busy, proved: let M_n be the mean time at which job n's progress is made. Round r's
|D_r| units are made at rate <= |D_r| / T^c_min and finish by e_r - T^s_min (e_r the round's
end: its last task still syncs), so their mean time is <= e_r - T^s_min - T^c_min / 2; and
e_r <= C_n - (|R_n| - 1 - r) L_n by (6), (7): each later round takes at least L_n, the least
length of one round of job n alone on the cluster (:attr:`HareView.round_length`; with one task
a round L_n = min_m (T^c + T^s), with |D_r| tasks a round it is the best split over GPUs).
Averaging over the rounds gives M_n <= C_n - T^s_min - T^c_min/2 - (|R_n| - 1) L_n / 2, and
M_n >= the left-endpoint sum because progress in I_l happens after l_{n,l}. (T^c_min and
T^s_min are minima over GPUs.)
Every optimal schedule of Hare_Sched gives a feasible point with the same C_n, so the LP
optimum is a lower bound of OPT. Build time and size grow with jobs x classes x intervals,
not with tasks or GPUs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pe
import scipy.sparse as sp

from hetsched.core.errors import HetschedError
from hetsched.core.reports import ValidationReport, Violation
from hetsched.exact.spec import FormulationSpec
from hetsched.hare.rates import rate_facets
from hetsched.hare.upper_bound import horizon
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.model import Instance
from hetsched.solvers.lp_arrays import INF, ArrayLP, optimal_duals

#: interval growth: the left-endpoint rule loses at most a factor 1 + eps on M_n. 0.05 against
#: 0.15 raised the bound 6.4% on hare-table2 20 jobs x 16 GPUs (issue 44) for 3x the intervals
EPSILON = 0.05


def mean_busy_tail(view: HareView) -> np.ndarray:
    """T^s_min + T^c_min / 2 + (|R_n| - 1) L_n / 2 per job: what C_n exceeds the mean time of
    its progress by (the module docstring's proof)."""
    return (
        view.sync.min(axis=1)
        + view.train.min(axis=1) / 2
        + (view.rounds - 1) * view.round_length / 2
    )


def job_facets(view: HareView, classes: list[list[int]]) -> list[np.ndarray | None]:
    """The facets of each job's rate region Q_n over the GPU ``classes`` (None: too large to
    enumerate; :func:`hetsched.hare.rates.rate_facets`)."""
    sizes = np.array([len(c) for c in classes], dtype=float)
    first = [c[0] for c in classes]
    return [
        rate_facets(int(view.tasks_per_round[n]), sizes, view.train[n, first], view.sync[n, first])
        for n in range(view.n_jobs)
    ]


def interval_grid(view: HareView, horizon: float, eps: float = EPSILON) -> np.ndarray:
    """tau_0 < tau_1 < ... < tau_L with tau_L >= horizon (see the module docstring)."""
    tau0 = float(view.arrival.min())
    delta = float(view.min_cycle.min())
    count = 1 + max(0, math.ceil(math.log(max(1.0, (horizon - tau0) / delta)) / math.log1p(eps)))
    return np.concatenate(([tau0], tau0 + delta * (1 + eps) ** np.arange(count)))


@dataclass(frozen=True)
class ProgressSolution:
    """The LP's progress z[n, c, l] (dense, zeros where no variable exists), C_n, and ``cells``:
    the (job, interval) pairs where a job may progress (the indicators a MIP on this grid has)."""

    view: HareView
    classes: tuple[tuple[int, ...], ...]
    tau: np.ndarray
    z: np.ndarray
    completion: np.ndarray
    cells: int = 0

    def round_starts(self) -> np.ndarray:
        """x^ per task (D order): when job n's cumulative progress reaches r |D_r|, read off the
        LP's progress curve (linear inside each interval, from l_{n,l} to tau_l)."""
        v = self.view
        n_arr, r_arr, _ = v.task_arrays
        out = np.empty(v.n_tasks)
        per_interval = self.z.sum(axis=1)  # (n, l)
        for n in range(v.n_jobs):
            left = np.maximum(self.tau[:-1], v.arrival[n])
            cum = np.concatenate(([0.0], np.cumsum(per_interval[n])))
            targets = np.arange(int(v.rounds[n])) * float(v.tasks_per_round[n])
            idx = np.clip(np.searchsorted(cum, targets, side="right") - 1, 0, len(left) - 1)
            amount = per_interval[n, idx]
            frac = np.where(amount > 0, (targets - cum[idx]) / np.where(amount > 0, amount, 1), 0.0)
            starts = left[idx] + np.clip(frac, 0, 1) * (self.tau[1:][idx] - left[idx])
            # a round starts no earlier than the chain bound allows
            starts = np.maximum(starts, v.arrival[n] + np.arange(int(v.rounds[n])) * v.min_cycle[n])
            mask = n_arr == n
            out[mask] = starts[r_arr[mask]]
        return out

    def to_dict(self) -> dict:
        return {
            "format": "hetsched.core.progress/1",
            "tau": self.tau.tolist(),
            "classes": [[self.view.gpu_ids[m] for m in c] for c in self.classes],
            "completion": dict(zip(self.view.job_ids, self.completion.tolist())),
            "progress": {self.view.job_ids[n]: self.z[n].tolist() for n in range(self.view.n_jobs)},
        }


@dataclass(frozen=True)
class IntervalData:
    """What both builds share: the view, the grid tau, the GPU classes, the variables' keys
    (n, c, l) as three index arrays, and the numbers of the constraints."""

    view: HareView
    tau: np.ndarray
    classes: list[list[int]]
    n: np.ndarray
    c: np.ndarray
    l: np.ndarray
    Tc: np.ndarray  # (n, c)
    N: np.ndarray  # tasks per job
    left: np.ndarray  # l_{n,l}
    lb: np.ndarray  # the chain bound of C_n
    tail: np.ndarray  # mean_busy_tail
    facets: list  # per job, the facets of its rate region (None: too large)
    eps: float = EPSILON  # the grid's growth

    def rate_rows(self) -> list[tuple[int, int]]:
        """(job, facet) of every rate row."""
        return [(n, q) for n, f in enumerate(self.facets) if f is not None for q in range(len(f))]

    def note(self) -> str:
        left_out = sum(1 for f in self.facets if f is None)
        return (
            f"interval LP: {len(self.classes)} GPU classes x {len(self.tau) - 1} intervals "
            f"(eps {self.eps:g}), {len(self.n)} variables, {len(self.rate_rows())} rate rows"
            + (f" ({left_out} job(s) without: rate region too large)" if left_out else "")
        )


def interval_data(instance: Instance, eps: float = EPSILON) -> IntervalData:
    h = horizon(instance)
    v, c_ub = h.view, h.completion
    if not 0 < eps <= 1:
        raise HetschedError(f"eps (the intervals' growth) must be in (0, 1], got {eps!r}")
    tau = interval_grid(v, float(c_ub.max()), eps)
    classes = v.gpu_classes()
    open_ = (tau[1:][None, :] > v.arrival[:, None]) & (tau[:-1][None, :] < c_ub[:, None])
    jn, jl = np.nonzero(open_)  # job-major, then interval: the order of the Pyomo keys
    k = len(classes)
    tail = mean_busy_tail(v)
    return IntervalData(
        v,
        tau,
        classes,
        np.repeat(jn, k),
        np.tile(np.arange(k), len(jn)),
        np.repeat(jl, k),
        v.train[:, [c[0] for c in classes]],
        v.rounds * v.tasks_per_round,
        np.maximum(tau[:-1][None, :], v.arrival[:, None]),
        v.completion_lower_bounds(),
        tail,
        job_facets(v, classes),
        eps,
    )


def build(instance: Instance, eps: float = EPSILON) -> pe.ConcreteModel:
    return build_from(interval_data(instance, eps), instance.name)


def build_from(d: IntervalData, name: str) -> pe.ConcreteModel:
    """The LP of the module docstring on the grid and keys of ``d`` (a stronger model built
    on it adds its own components, as :mod:`hetsched.models.hare_interval_mip` does)."""
    v, tau, classes, Tc, N, left = d.view, d.tau, d.classes, d.Tc, d.N, d.left
    keys = list(zip(d.n.tolist(), d.c.tolist(), d.l.tolist()))

    m = pe.ConcreteModel(name=f"hare_interval_lp[{name}]")
    m.Z = pe.Set(
        initialize=keys, dimen=3, doc="(job n, GPU class c, interval l) where n may progress"
    )
    m.z = pe.Var(m.Z, domain=pe.NonNegativeReals, doc="progress z_{n,c,l} in tasks")
    m.C = pe.Var(
        range(v.n_jobs), bounds=lambda _, n: (float(d.lb[n]), None), doc="C_n (chain bound)"
    )
    by_job: dict[int, list] = {}
    by_cl: dict[tuple[int, int], list] = {}
    by_nl: dict[tuple[int, int], list] = {}
    for key in keys:
        by_job.setdefault(key[0], []).append(key)
        by_cl.setdefault((key[1], key[2]), []).append(key)
        by_nl.setdefault((key[0], key[2]), []).append(key)

    m.objective = pe.Objective(
        expr=sum(float(v.weight[n]) * m.C[n] for n in range(v.n_jobs))
    )  # Hare Sec. 5.1
    m.all_work = pe.Constraint(  # every task, (5)
        range(v.n_jobs), rule=lambda _, n: sum(m.z[k] for k in by_job[n]) == float(N[n])
    )
    m.capacity = pe.Constraint(  # a GPU trains one task at a time, (8)
        list(by_cl),
        rule=lambda _, c, l: (
            sum(float(Tc[k[0], c]) * m.z[k] for k in by_cl[c, l])
            <= len(classes[c]) * float(tau[l + 1] - tau[l])
        ),
    )
    m.parallelism = pe.Constraint(  # one round of |D_r| tasks at a time, (7)
        list(by_nl),
        rule=lambda _, n, l: (
            sum(float(Tc[n, k[1]]) * m.z[k] for k in by_nl[n, l])
            <= float(v.tasks_per_round[n]) * float(tau[l + 1] - left[n, l])
        ),
    )
    m.mean_busy = pe.Constraint(  # C_n >= the mean busy time bound (module docstring), (6)-(7)
        range(v.n_jobs),
        rule=lambda _, n: (
            m.C[n]
            >= sum(float(left[n, k[2]] / N[n]) * m.z[k] for k in by_job[n]) + float(d.tail[n])
        ),
    )
    m.rate = pe.Constraint(  # rounds at the rates of Q_n, (4), (6)-(8)
        d.rate_rows(),
        rule=lambda _, n, q: (
            m.C[n]
            >= float(v.arrival[n]) + sum(float(d.facets[n][q][k[1]]) * m.z[k] for k in by_job[n])
        ),
    )
    m.notes = [d.note()]
    m.view, m.tau, m.classes = v, tau, classes
    m.highs_options = {"solver": "ipm"}  # measured faster than simplex at cluster scale
    return m


def build_arrays(instance: Instance, eps: float = EPSILON) -> ArrayLP:
    """The same LP as :func:`build`, row for row, as arrays (no modelling layer): columns z (in
    the keys' order) then C_n; rows all_work, capacity, parallelism, mean_busy, rate."""
    d = interval_data(instance, eps)
    v, K, J = d.view, len(d.n), d.view.n_jobs
    cols = np.arange(K)
    tz = d.Tc[d.n, d.c]
    width = np.diff(d.tau)
    cl, cl_row = np.unique(d.c * len(width) + d.l, return_inverse=True)
    nl, nl_row = np.unique(d.n * len(width) + d.l, return_inverse=True)
    sizes = np.array([len(c) for c in d.classes], dtype=float)
    rows = [
        sp.coo_matrix((np.ones(K), (d.n, cols)), shape=(J, K + J)),  # all_work
        sp.coo_matrix((tz, (cl_row, cols)), shape=(len(cl), K + J)),  # capacity
        sp.coo_matrix((tz, (nl_row, cols)), shape=(len(nl), K + J)),  # parallelism
        sp.coo_matrix(  # mean_busy: C_n - sum (l_{n,l} / N_n) z >= tail_n
            (
                np.concatenate([-d.left[d.n, d.l] / d.N[d.n], np.ones(J)]),
                (np.concatenate([d.n, np.arange(J)]), np.concatenate([cols, K + np.arange(J)])),
            ),
            shape=(J, K + J),
        ),
    ]
    rates = d.rate_rows()
    if rates:  # rate: C_n - alpha . z_n >= a_n
        of_job = {n: np.flatnonzero(d.n == n) for n, _ in rates}  # job n's columns z
        entries = [
            (r, int(col), -float(d.facets[n][q][d.c[col]]))
            for r, (n, q) in enumerate(rates)
            for col in of_job[n]
        ] + [(r, K + n, 1.0) for r, (n, _) in enumerate(rates)]
        ri, ci, vals = (np.array(x) for x in zip(*entries))
        rows.append(sp.coo_matrix((vals, (ri, ci)), shape=(len(rates), K + J)))
    c_of, l_of = cl // len(width), cl % len(width)
    n_of, ln_of = nl // len(width), nl % len(width)
    upper = np.concatenate(
        [
            d.N.astype(float),
            sizes[c_of] * width[l_of],
            v.tasks_per_round[n_of] * (d.tau[1:][ln_of] - d.left[n_of, ln_of]),
            np.full(J + len(rates), INF),
        ]
    )
    lower = np.concatenate(
        [
            d.N.astype(float),
            np.full(len(cl) + len(nl), -INF),
            d.tail,
            [float(v.arrival[n]) for n, _ in rates],
        ]
    )
    return ArrayLP(
        cost=np.concatenate([np.zeros(K), v.weight.astype(float)]),
        matrix=sp.vstack(rows).tocsc(),
        row_lower=lower,
        row_upper=upper,
        col_lower=np.concatenate([np.zeros(K), d.lb.astype(float)]),
        col_upper=np.full(K + J, INF),
        data=d,
        notes=[d.note() + " (as arrays)"],
    )


def capacity_prices(lp: ArrayLP, row_duals: np.ndarray) -> np.ndarray:
    """Price of a GPU-second per (GPU class, interval) from the row duals of an optimal solution
    of :func:`build_arrays`'s LP: the capacity rows' (0 where a class has no row in an interval).
    Every schedule of a job meets the LP's job rows, so pricing a job's schedules at these
    prices costs each job at least what its LP part costs at them (the Lagrangian argument)."""
    d = lp.data
    J, L = d.view.n_jobs, len(d.tau) - 1
    cl = np.unique(d.c * L + d.l)
    out = np.zeros((len(d.classes), L))
    out[cl // L, cl % L] = np.maximum(0.0, -np.asarray(row_duals)[J : J + len(cl)])
    return out


def class_price_integrals(
    instance: Instance, edges: np.ndarray
) -> tuple[list[list[int]], np.ndarray, float] | None:
    """The LP's GPU classes, the integral of each class's price of a GPU-second
    (:func:`capacity_prices`) over each [edges[i], edges[i + 1]) in seconds (classes x
    len(edges) - 1), and the LP's bound; None where the LP has no optimum."""
    lp = build_arrays(instance)
    solved = optimal_duals(lp)
    if solved is None:
        return None
    value, duals = solved
    per_second = capacity_prices(lp, duals)
    tau = lp.data.tau
    out = np.zeros((len(lp.data.classes), len(edges) - 1))
    for c in range(len(lp.data.classes)):
        # the integral of the class's price density from tau_0 to each edge
        integral = np.concatenate(([0.0], np.cumsum(per_second[c] * np.diff(tau))))
        out[c] = np.diff(np.interp(edges, tau, integral, left=0.0, right=integral[-1]))
    return [list(c) for c in lp.data.classes], out, value


def extract_arrays(lp: ArrayLP, instance: Instance, x: np.ndarray) -> ProgressSolution:
    d = lp.data
    z = np.zeros((d.view.n_jobs, len(d.classes), len(d.tau) - 1))
    K = len(d.n)
    z[d.n, d.c, d.l] = np.maximum(0.0, x[:K])
    classes = tuple(tuple(c) for c in d.classes)
    completion = np.asarray(x[K:], dtype=float)
    return ProgressSolution(d.view, classes, d.tau, z, completion, K // len(d.classes))


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> ProgressSolution:
    v = m.view
    z = np.zeros((v.n_jobs, len(m.classes), len(m.tau) - 1))
    for key in m.Z:
        z[key] = max(0.0, value(m.z[key]))
    completion = np.array([value(m.C[n]) for n in range(v.n_jobs)])
    classes = tuple(tuple(c) for c in m.classes)
    return ProgressSolution(v, classes, m.tau, z, completion, len(m.Z) // len(classes))


def check(instance: Instance, sol: ProgressSolution) -> ValidationReport:
    """Recompute the LP's constraints and objective from the instance (not from the model)."""
    v = hare_view(instance)
    bad: list[Violation] = []
    N = v.rounds * v.tasks_per_round
    tol = 1e-6 * max(1.0, float(sol.tau[-1]))
    done = sol.z.sum(axis=(1, 2))
    for n in np.flatnonzero(np.abs(done - N) > 1e-6 * np.maximum(1, N)):
        bad.append(
            Violation("missing_task", f"job {v.job_ids[n]}: progress {done[n]:.6g} != {N[n]} tasks")
        )
    Tc = v.train[:, [c[0] for c in sol.classes]]
    used = np.einsum("nc,ncl->cl", Tc, sol.z)
    room = np.array([len(c) for c in sol.classes])[:, None] * np.diff(sol.tau)[None, :]
    for c, l in zip(*np.nonzero(used > room + tol)):
        bad.append(
            Violation(
                "overlap",
                f"class {c} interval {l}: {used[c, l]:.6g} GPU-seconds > {room[c, l]:.6g}",
            )
        )
    left = np.maximum(sol.tau[:-1][None, :], v.arrival[:, None])
    job_use = np.einsum("nc,ncl->nl", Tc, sol.z)
    cap = v.tasks_per_round[:, None] * np.maximum(0.0, sol.tau[1:][None, :] - left)
    for n, l in zip(*np.nonzero(job_use > cap + tol)):
        bad.append(
            Violation("barrier", f"job {v.job_ids[n]} interval {l}: more than |D_r| GPUs busy")
        )
    tail = mean_busy_tail(v)
    c_min = np.maximum(v.completion_lower_bounds(), np.einsum("nl,ncl->n", left, sol.z) / N + tail)
    done = sol.z.sum(axis=2)  # (n, c): each job's tasks per class
    for n, facets in enumerate(job_facets(v, [list(c) for c in sol.classes])):
        if facets is not None:
            c_min[n] = max(c_min[n], v.arrival[n] + float((facets @ done[n]).max()))
    objective = float(np.dot(v.weight, c_min))
    return ValidationReport(not bad, objective, dict(zip(v.job_ids, c_min.tolist())), bad)


# the same LP two ways: a declarative Pyomo model, and arrays for HiGHS (no modelling layer)
_SHARED = dict(name="hare-interval-lp", objective_is_bound=True, validator=check, options=("eps",))
SPECS = [
    FormulationSpec(
        kind="pyomo",
        build=build,
        extract=extract,
        summary="interval-indexed LP over job progress with mean-busy-time completion: a lower bound at cluster scale",
        **_SHARED,
    ),
    FormulationSpec(
        kind="lp",
        build=build_arrays,
        extract=extract_arrays,
        summary="the same interval LP built as arrays and solved by HiGHS's interior point method",
        **_SHARED,
    ),
]
