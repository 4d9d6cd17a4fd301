"""Hare_Sched_RL with (9) imposed for *every subset* S of the tasks on each GPU (Queyranne's
full parallel-inequality polyhedron), instead of once for all of D:

    sum_{i in S} y_{i,m} T^c_{i,m} (x_i + T^c_{i,m}) >= 1/2 [(sum_{i in S} y_{i,m} T^c_{i,m})^2
                                                        + sum_{i in S} (y_{i,m} T^c_{i,m})^2]   for all S, m   (9S)

linearized exactly as in :mod:`hare_sched_rl` (u = y x, v = y y): sum_S T u >= sum_{i<j in S} T T v.
Every feasible schedule satisfies (9S) (the tasks of S that run on m are trained one at a time),
so this is still a lower bound of Hare_Sched, at least as strong as Hare_Sched_RL. The proof of
Lemma 2 applies (9) to the prefix {pi(1), ..., pi(j)} of the H order, which needs exactly these
subset inequalities (see proofs/hare_lemma2.md).

There are 2^|D| |M| of them. Three ways to impose them, one optimum:

``subsets="extended"`` (the default) writes them all with |D|^2 |M| variables. For fixed m the
right side g(S) = sum_{i<j in S} c_ij (c_ij = T_i T_j v_ij >= 0) is a sum of one supermodular
function per pair, and the polyhedron {z : z(S) >= g(S) for all S} of a sum of supermodular
functions is the Minkowski sum of theirs (its vertices are greedy vectors, and the greedy vector
of a sum in an order is the sum of the greedy vectors in that order). The pair {i, j}'s own
polyhedron is {z_i + z_j >= c_ij, z >= 0}. So with d_{j,i,m} >= 0 ("the share of j before i on m"):

    u_{i,m} >= sum_{j != i} T^c_{j,m} d_{j,i,m}       for all i, m           rl_before
    d_{i,j,m} + d_{j,i,m} >= v_{i,j,m}                for all i < j, m       rl_pair_order

projects onto exactly the points (u, v) meeting (9S) for every S (z_i = T_i u_i, the pair's share
z^{ij}_i = T_i T_j d_{j,i}). It also fixes GPU symmetry: GPUs m < m' with the same T^c and T^s
for every job are interchangeable, so the tasks on them may be relabelled so that the first task
(in D's order) on m comes before the first on m' (empty GPUs last):

    y_{i,m'} <= sum_{i' < i} y_{i',m}                 m' the next GPU identical to m    rl_gpu_symmetry

The tasks of one round are interchangeable too. Instead of ordering their starts
(``identical_task_order`` of the base model), the extended form orders their GPUs: task k+1 of a
round runs on a GPU of index at least task k's,

    sum_{m' <= m} y_{(n,r,k+1),m'} <= sum_{m' <= m} y_{(n,r,k),m'}      for all m    rl_round_gpu_order

Relabelling a round's tasks by GPU keeps every solution, and it agrees with the GPU relabelling
above (two identical GPUs first used in the same round take its tasks in GPU order). Unlike the
start order, which lets tasks of equal start swap GPUs, it leaves one assignment per multiset
of GPUs: on the audit's 20-40-task instances, 3 of 10 solve to optimality in 60 s instead of 0.

``subsets="lazy"`` starts from (9) for all of D and lets :func:`separate` add the violated ones
after each solve; ``subsets="all"`` writes out every subset (at most 12 tasks): the cross-checks.

**Subset tangents** (:func:`separate`). For binary y, the pairs of S on m sum to 1/2 (L_S^2 -
sum_S T_i^2 y_i) with L_S = sum_S T_i y_i, and L^2 >= 2 a L - a^2 for every a, so

    sum_{i in S} T_i u_{i,m} >= a L_S - a^2/2 - 1/2 sum_{i in S} T_i^2 y_{i,m}    for all S, a   (9T)

holds at every integer point, and at a = L_S it *is* (9S). At a fractional point it is much
stronger than (9S) through v (v >= y_i + y_j - 1 is 0 when y_i + y_j <= 1). :func:`separate`
looks for violated (9T) on the prefixes of the tasks on m ordered by u/y + T and by u/y + T/2
(at an integer point the first is Queyranne's exact separation: the most violated S is a prefix
in the order of completion times) with a = L_S, the tangent's best point. The engine calls it on
the LP relaxation before the MILP (``separate_fractional``; :mod:`hetsched.solvers.root_cuts`)
and, for ``lazy``, after each integer solve until no prefix is violated.
"""

from __future__ import annotations

from itertools import combinations

import pyomo.environ as pe

from hetsched.core.errors import HetschedError
from hetsched.exact.spec import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.models.hare_sched_rl import add_products, base_model, check_size, extract

MAX_TASKS = 12  # subsets="all"
TOL = 1e-6  # a cut is added when it is violated by more than this, relative to its right side


def subset_inequality(m: pe.ConcreteModel, S: tuple, g: int):
    """(9S) for the tasks S on GPU g, linearized: sum T u >= sum_{i<j} T T v."""
    return sum(m.Tc[i[0], g] * m.u[i, g] for i in S) >= sum(
        m.Tc[i[0], g] * m.Tc[j[0], g] * m.v[min(i, j) + max(i, j), g] for i, j in combinations(S, 2)
    )


def build(instance: Instance, subsets: str = "extended") -> pe.ConcreteModel:
    if subsets not in ("extended", "lazy", "all"):
        raise HetschedError(f"subsets must be 'extended', 'lazy' or 'all' (got {subsets!r})")
    n_tasks = sum(j.n_tasks for j in instance.jobs)
    if subsets == "all" and n_tasks > MAX_TASKS:
        raise HetschedError(
            f"hare-sched-rl-subsets with subsets=all writes out all 2^|D| subsets: {n_tasks} "
            f"tasks is more than {MAX_TASKS}; use subsets=extended"
        )
    check_size(instance, "hare-sched-rl-subsets", per_pair=3 if subsets == "extended" else 1)
    m = base_model(instance)
    add_products(m)
    tasks = sorted(m.D)
    if subsets == "all":
        family = [S for size in range(2, len(tasks) + 1) for S in combinations(tasks, size)]
        m.S = pe.Set(initialize=range(len(family)), doc="task subsets S, |S| >= 2")
        m.rl_queyranne_subset = pe.Constraint(
            m.S, m.M, rule=lambda _, s, g: subset_inequality(m, family[s], g)
        )  # (9S)
    elif subsets == "lazy":
        m.rl_queyranne = pe.Constraint(
            m.M, rule=lambda _, g: subset_inequality(m, tasks, g)
        )  # (9) for S = D
    else:
        m.O = pe.Set(
            initialize=[j + i for i in tasks for j in tasks if j != i],
            dimen=6,
            doc="ordered task pairs (j, i), j != i",
        )
        m.d = pe.Var(m.O, m.M, domain=pe.NonNegativeReals, doc="d_{j,i,m}: share of j before i")
        before = {i: [j for j in tasks if j != i] for i in tasks}
        m.rl_before = pe.Constraint(
            m.D,
            m.M,
            rule=lambda _, *p: (
                m.u[p] >= sum(m.Tc[j[0], p[3]] * m.d[j + p[:3], p[3]] for j in before[p[:3]])
            ),
        )  # (9S), as a Minkowski sum of pairs
        m.rl_pair_order = pe.Constraint(
            m.P, m.M, rule=lambda _, *p: m.d[p[:6], p[6]] + m.d[p[3:6] + p[:3], p[6]] >= m.v[p]
        )  # (9S)
        twins = identical_successor(m)
        m.rl_gpu_symmetry = pe.Constraint(
            [(k, g) for k in range(len(tasks)) for g in twins],
            rule=lambda _, k, g: m.y[tasks[k], twins[g]] <= sum(m.y[j, g] for j in tasks[:k]),
        )  # relabelling identical GPUs
        # the tasks of a round, relabelled by GPU instead of by start (see the module doc)
        m.identical_task_order.deactivate()
        gpus = sorted(m.M)
        m.rl_round_gpu_order = pe.Constraint(
            [(i, g) for i in tasks for g in gpus[:-1] if i[2] > 0],
            rule=lambda _, *p: (
                sum(m.y[p[:3], h] for h in gpus if h <= p[3])
                <= sum(m.y[(p[0], p[1], p[2] - 1), h] for h in gpus if h <= p[3])
            ),
        )  # relabelling the identical tasks of a round by GPU
    m.rl_subset_tangent = pe.ConstraintList(doc="(9T), added by separate()")
    return m


def identical_successor(m: pe.ConcreteModel) -> dict[int, int]:
    """GPU m -> the next GPU m' > m with the same T^c and T^s for every job (if any)."""
    gpus = sorted(m.M)

    def same(a: int, b: int) -> bool:
        return all(m.Tc[n, a] == m.Tc[n, b] and m.Ts[n, a] == m.Ts[n, b] for n in m.N)

    twins = {a: next((b for b in gpus if b > a and same(a, b)), None) for a in gpus}
    return {a: b for a, b in twins.items() if b is not None}


CUTS_PER_GPU = 5  # the most violated (9T) per GPU and call


def subset_tangent(m: pe.ConcreteModel, S: list, g: int, a: float):
    """(9T) for the tasks S on GPU g at the point a: sum T u >= a L - a^2/2 - 1/2 sum T^2 y."""
    T = {i: m.Tc[i[0], g] for i in S}
    return (
        sum(T[i] * m.u[i, g] for i in S)
        >= a * sum(T[i] * m.y[i, g] for i in S)
        - a * a / 2
        - sum(T[i] ** 2 * m.y[i, g] for i in S) / 2
    )


def separate(m: pe.ConcreteModel, value) -> int:
    """Add up to CUTS_PER_GPU violated subset tangents (9T) per GPU at the point ``value`` (an
    LP or a MILP solution); return how many were added. At an integer point no violated one
    means that every (9S) holds (Queyranne's prefix order by completion time is exact there)."""
    added = 0
    for g in m.M:
        on = []
        for i in m.D:
            y = value(m.y[i, g])
            if y > 1e-9:
                on.append((i, m.Tc[i[0], g], y, value(m.u[i, g])))
        found: dict[tuple, tuple[float, float]] = {}
        for half in (1.0, 0.5):  # orders by u/y + T (exact at integer y) and by u/y + T/2
            load = pairs = lhs = 0.0
            prefix = []
            for i, p, y, u in sorted(on, key=lambda r: (r[3] / r[2] + half * r[1], r[0])):
                prefix.append(i)
                load += p * y
                lhs += p * u
                pairs += p * p * y
                short = (load * load - pairs) / 2 - lhs  # (9T) at a = L_S, right side minus left
                if len(prefix) > 1 and short > TOL * max(1.0, load * load):
                    key = tuple(prefix)
                    found[key] = max(found.get(key, (0.0, load)), (short, load))
        best = sorted(found.items(), key=lambda kv: -kv[1][0])[:CUTS_PER_GPU]
        for S, (_, a) in best:
            m.rl_subset_tangent.add(subset_tangent(m, list(S), g, a))
            added += 1
    return added


SPEC = FormulationSpec(
    name="hare-sched-rl-subsets",
    kind="pyomo",
    build=build,
    extract=extract,
    objective_is_bound=True,
    options=("subsets",),
    separate=separate,
    separate_fractional=True,
    summary="Hare_Sched_RL with (9) for every task subset per GPU (an extended formulation, subset tangent cuts): the relaxation Lemma 2 needs",
)
