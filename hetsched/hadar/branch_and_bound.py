"""DP_allocation's problem solved by depth-first branch and bound, for long queues.

DP_allocation (:func:`hetsched.hadar.online.dp_allocation`) takes or skips each queued job in
queue order; a taken job gets FIND_ALLOC's gang at the prices of what is allocated before it.
The memoized DP visits up to n(Q) x prod_{h,r}(c_h^r + 1) states (proofs/hadar_theorem1.md). Here
the same include/skip tree is searched take-first, and a node is pruned when an upper bound on
what its subtree can add does not beat the best total found so far. The answer is the DP's
answer when the search ends (``proven``); stopped by its node or time limit, it returns the best
total found and a valid upper bound (the largest bound of a node left unexplored). The first
incumbents come from single passes over the queue that take only the m jobs with the best
u_j / W_j (m = 1, 2, ... growing by 25% up to the whole queue): each pass is one leaf of the tree.
As in the memoized DP, a state (index, free GPUs) reached again with no larger total is not
searched twice: depth-first, its first visit's subtree is finished (searched or pruned against
an incumbent no better than the current one) before the second visit.

The bound at a node with F free GPUs, queue suffix from ``idx`` and allocation levels gamma:
* utility: job j finishes no sooner than at its fastest rate (W_j GPUs of its fastest type), so
  its payoff is at most u_j = U_j(that JCT) minus what its GPUs cost. Taking jobs of total size
  G earns at most V(G), the fractional knapsack of (u_j, W_j) over the suffix.
* cost: a GPU that becomes the i-th allocated one on (h, r) in this subtree is priced at the
  level before its job, at least gamma + i - W_max, so G GPUs cost at least C(G), the sum of the
  G smallest of k_h^r(max(gamma, gamma + i - W_max)) over cells and i (prices increase with gamma).
* bound = max over G <= F of V(G) - C(G).

That bound credits every job with its fastest type wherever GPUs are free. Where the queue asks
for more GPUs than are free, the lesser of it and the type bound is taken
(:mod:`hetsched.hadar.type_bound`: the types' capacities relaxed with an LP's multipliers, so
that a job pays for the type it runs on; one LP a slot). On the multi-GPU Philly window, whose
slots choose about 40 of 480 jobs, it is the LP relaxation's value at the root, 1.5-4.9% above
the DP's optimum on the first four slots instead of 7-26%.

The first incumbents are single passes over the queue taking only the m best jobs of a ranking;
with the type bound, two more rankings: by net payoff p_j / W_j and by the part of each job the
type bound's LP takes.

The search runs compiled (:mod:`hetsched.hadar.bnb_kernel`) on the slot's arrays
(:class:`hetsched.hadar.slot_arrays.SlotArrays`). :func:`lp_bound` is a separate, tighter bound
that keeps the GPU types apart (an LP; ``hetsched bench hadar`` reports it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from hetsched.hadar import bnb_kernel
from hetsched.hadar.arrays import HadarView
from hetsched.hadar.slot import Candidate, Prices, Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.utility import utility


@dataclass
class BnbResult:
    value: float  # the best total payoff found
    chosen: dict[int, Candidate]
    bound: float  # an upper bound on DP_allocation's optimum (= value when proven)
    proven: bool
    nodes: int
    seconds: float


def dp_allocation_bnb(
    slot: Slot,
    node_limit: int = 1_000_000,
    time_limit: float = 10.0,
    utility_name: str | None = None,
    comm_cost: float = 0.0,
    select: str = "min-cost",
) -> BnbResult:
    """The include/skip choice of DP_allocation with the largest total payoff, by branch and bound
    (compiled: :func:`hetsched.hadar.bnb_kernel.search`). Where the queue asks for more GPUs
    than are free, the type bound joins the search's own (:meth:`SlotArrays.with_type_bound`)."""
    start = time.perf_counter()
    arrays = SlotArrays.of(slot, utility_name, comm_cost, select)
    value, taken, upper, proven, nodes = search_slot(arrays, node_limit, start + time_limit)
    chosen = arrays.chosen(taken)
    return BnbResult(
        float(value), chosen, float(upper), bool(proven), int(nodes), time.perf_counter() - start
    )


def search_slot(arrays: SlotArrays, node_limit: int, deadline: float) -> tuple:
    """:func:`dp_allocation_bnb` on a slot's arrays, up to its search: (value, queue positions
    taken, upper bound, proven, nodes); ``arrays.chosen`` turns the positions into gangs."""
    if arrays.need.sum() > arrays.free0.sum():
        arrays = arrays.with_type_bound()
    return _search(arrays, int(node_limit), deadline)


def _search(arrays: SlotArrays, node_limit: int, deadline: float) -> tuple:
    """One compiled search: (value, queue positions taken, upper bound, proven, nodes)."""
    return bnb_kernel.search(
        arrays.free0,
        arrays.find_args(),
        arrays.bound_args(),
        *arrays.key_args(),
        int(node_limit),
        deadline,
    )


def lp_bound(
    view: HadarView,
    queue: list[int],
    free: np.ndarray,
    prices: Prices,
    remaining: np.ndarray,
    t: int,
    utility_name: str | None = None,
) -> float:
    """An upper bound on DP_allocation's optimum that keeps GPU types apart (an LP, HiGHS):

        max sum_{j,q} u_jq x_jq - sum_{r,i} m_ri s_ri
        s.t. sum_q x_jq <= 1                          (each job at most one speed level q)
             sum_r z_jqr = W_j x_jq                   (its gang: W_j GPUs of types at least as fast)
             sum_{j,q} z_jqr = sum_i s_ri <= free_r   (type r's free GPUs, summed over machines)
             0 <= x, s <= 1, z >= 0

    u_jq: U_j at the rate of a gang whose slowest type is job j's q-th fastest; m_ri: the i-th
    smallest lower bound on a type-r GPU's price, k(max(gamma, gamma + i - W_max)) over its cells
    (see the module docstring). Any take/skip choice of the DP maps to a feasible point of no
    smaller value, machines merged."""
    cap = view.capacity
    n_types = cap.shape[1]
    w_max = max(int(view.workers[j]) for j in queue)
    cols_u, rows, cols, vals = [], [], [], []
    n_rows = [0]

    def new_row() -> int:
        n_rows[0] += 1
        return n_rows[0] - 1

    ub_rows = []  # (row, rhs) of <= rows; equality rows are written as two inequalities
    type_row = {r: new_row() for r in range(n_types)}  # sum z - sum s <= 0 ... and sum s <= free_r
    type_cap = {r: new_row() for r in range(n_types)}
    var = 0
    for j in queue:
        x = view.throughput[j]
        levels = sorted({float(v) for v in x if v > 0}, reverse=True)
        one = new_row()
        ub_rows.append((one, 1.0))
        for level in levels:
            allowed = [r for r in range(n_types) if x[r] >= level]
            if int(free[:, allowed].sum()) < view.workers[j]:
                continue
            rate = view.rate(j, [r for r in range(n_types) if x[r] == level], int(view.workers[j]))
            slots = math.ceil(remaining[j] / rate - 1e-12)
            u = utility(view, utility_name, j, view.jct(j, t + slots - 1))
            xq = var
            var += 1
            cols_u.append(-u)
            rows.append(one)
            cols.append(xq)
            vals.append(1.0)
            gang_lo, gang_hi = new_row(), new_row()  # W x - sum z <= 0 and sum z - W x <= 0
            ub_rows += [(gang_lo, 0.0), (gang_hi, 0.0)]
            rows += [gang_lo, gang_hi]
            cols += [xq, xq]
            vals += [float(view.workers[j]), -float(view.workers[j])]
            for r in allowed:
                z = var
                var += 1
                cols_u.append(0.0)
                rows += [gang_lo, gang_hi, type_row[r]]
                cols += [z, z, z]
                vals += [-1.0, 1.0, 1.0]
    bounds = [(0, 1) if c < 0 else (0, None) for c in cols_u]
    for r in range(n_types):
        ub_rows += [(type_row[r], 0.0), (type_cap[r], float(free[:, r].sum()))]
        marg = sorted(
            prices.price(max(cap[h, r] - free[h, r], cap[h, r] - free[h, r] + i - w_max), cap[h, r])
            for h in range(cap.shape[0])
            for i in range(1, int(free[h, r]) + 1)
        )
        for m in marg:
            sv = var
            var += 1
            cols_u.append(m)
            bounds.append((0, 1))
            rows += [type_row[r], type_cap[r]]
            cols += [sv, sv]
            vals += [-1.0, 1.0]
    b = np.zeros(n_rows[0])
    for row, rhs in ub_rows:
        b[row] = rhs
    A = coo_matrix((vals, (rows, cols)), shape=(n_rows[0], var)).tocsr()
    res = linprog(np.array(cols_u), A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"the LP bound failed: {res.message}")
    return max(0.0, -float(res.fun))
