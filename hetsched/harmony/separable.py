"""The exact placement optimum when no job slows another (interference and communication zero),
as an integer program solved by HiGHS (``scipy.optimize.milp``): the case of the gang
simulator's Harmony policy, where GPUs are exclusive and a job runs at its slowest server's
speed (:class:`~hetsched.harmony.problem.PlacementView`'s ``server_speed``).

Then a placed job's reward is w_n sigma_{n,s*} (w_n = b_n / e_n, eq. (1); s* its slowest
server), independent of the others, and the optimum is: binaries y_{n,q} (job n is placed with
speed level q, its bottleneck), integers x_{n,s} (its workers on server s),

    max  sum_{n,q} w_n q y_{n,q}
    s.t. sum_q y_{n,q} <= 1,    sum_s x_{n,s} = W_n sum_q y_{n,q}       (whole jobs or none)
         x_{n,s} <= W_n sum_{q <= sigma_{n,s}} y_{n,q}                   (no server slower than q)
         sum_n d_{n,k} x_{n,s} <= free_{s,k}, x_{n,s} = 0 where not allowed.

Independent of :func:`hetsched.harmony.exhaustive.exhaustive_placement`; the tests require the
two to agree where both apply.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from hetsched.core.errors import HetschedError
from hetsched.harmony.heuristics import _State
from hetsched.harmony.problem import Placement
from hetsched.harmony.view import PlacementView


def separable_placement(view: PlacementView) -> tuple[Placement, float]:
    """(an optimal placement of the new jobs, the new jobs' reward) for a view with no
    interference, no communication cost and no parameter servers."""
    new = [int(n) for n in np.flatnonzero(view.new)]
    if (
        view.interference.any()
        or view.communication[new].any()
        or view.parameter_servers[new].any()
    ):
        raise HetschedError(
            "separable placement: needs zero interference, communication and parameter servers"
        )
    S = view.n_servers
    speed = view.server_speed if view.server_speed is not None else np.ones((view.n_jobs, S))
    allowed = view.allowed if view.allowed is not None else np.ones((view.n_jobs, S), bool)
    free = view.capacity - _State(view).used
    weight = view.weight()
    cols: list[tuple] = []  # ("y", n, q) or ("x", n, s)
    levels: dict[int, list[tuple[float, int]]] = {}  # job -> (q, column of y_{n,q})
    places: dict[int, list[tuple[int, int]]] = {}  # job -> (s, column of x_{n,s})
    for n in new:
        qs = sorted({float(speed[n, s]) for s in range(S) if allowed[n, s] and speed[n, s] > 0})
        levels[n] = [(q, len(cols) + i) for i, q in enumerate(qs)]
        cols += [("y", n, q) for q in qs]
        places[n] = []
        for s in range(S):
            if allowed[n, s] and speed[n, s] > 0:
                places[n].append((s, len(cols)))
                cols.append(("x", n, s))
    if not cols:
        return Placement({}), 0.0
    c = np.zeros(len(cols))
    for n in new:
        for q, i in levels[n]:
            c[i] = -weight[n] * q
    lo, hi = [], []
    A = lil_matrix((len(new) * (2 + S) + S * len(view.resources), len(cols)))
    r = 0
    for n in new:
        ys, xs, w = levels[n], places[n], int(view.workers[n])
        for _, i in ys:  # at most one speed level
            A[r, i] = 1
        lo.append(-np.inf), hi.append(1)
        r += 1
        for _, i in xs:  # whole job
            A[r, i] = 1
        for _, i in ys:
            A[r, i] = -w
        lo.append(0), hi.append(0)
        r += 1
        for s, i in xs:  # only servers at least as fast as the level
            A[r, i] = 1
            for q, iy in ys:
                if q <= speed[n, s] + 1e-12:
                    A[r, iy] = -w
            lo.append(-np.inf), hi.append(0)
            r += 1
    on_server: dict[int, list[tuple[int, int]]] = {s: [] for s in range(S)}
    for n in new:
        for s, i in places[n]:
            on_server[s].append((n, i))
    for s in range(S):
        for k in range(len(view.resources)):
            for n, i in on_server[s]:
                if view.worker_demand[n, k]:
                    A[r, i] = view.worker_demand[n, k]
            lo.append(-np.inf), hi.append(free[s, k] + 1e-9)
            r += 1
    A = A[:r].tocsr()
    upper = np.array([1 if k[0] == "y" else int(view.workers[k[1]]) for k in cols], dtype=float)
    res = milp(
        c,
        constraints=LinearConstraint(A, np.array(lo), np.array(hi)),
        integrality=np.ones(len(cols)),
        bounds=Bounds(np.zeros(len(cols)), upper),
    )
    if res.x is None:
        raise HetschedError(f"separable placement: HiGHS found no solution ({res.message})")
    xw = np.zeros((view.n_jobs, S), dtype=int)
    for i, (kind, n, s) in enumerate(cols):
        if kind == "x":
            xw[n, s] = int(round(res.x[i]))
    return Placement.from_arrays(view, xw, np.zeros_like(xw)), float(-res.fun)
