"""Column generation: the engine on a toy problem, and hare-sched on --solver colgen against the
proven optima (bound below, schedule above, optimal only when the two meet). Hare's job pricing
against enumeration: tests/hare/test_hare_job_pricing.py."""

import dataclasses
import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import MANIFEST, instance_path

from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import solve
from hetsched.hare.local_search import local_search_upper_bound
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.instance.generators import ladder
from hetsched.instance.io import load_instance
from hetsched.schedule.validate import validate
from hetsched.solvers import SolverOptions, Status
from hetsched.solvers.colgen import Column, DantzigWolfeProblem, lp_relaxation, solve_colgen
from hetsched.solvers.colgen.branching import fix_cost_ranges
from hetsched.solvers.colgen.restricted import PRESOLVE_PROBING
from hetsched.testing.strategies import hare_instances

CERTIFIED = sorted(k for k, e in MANIFEST.items() if e["optimum"] is not None)


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


# ---- the engine on a generalized assignment problem (not Hare): blocks = items, rows = bins


def _gap_problem(cost, size, cap):
    n_items, n_bins = cost.shape

    def price(i, pi, lo=-np.inf, hi=np.inf):
        values = np.where((cost[i] > lo) & (cost[i] <= hi), cost[i] + pi * size[i], np.inf)
        if not np.isfinite(values).any():
            return np.inf, []
        best = [
            int(b) for b in np.argsort(values, kind="stable")[:2] if np.isfinite(values[b])
        ]  # two: the engine takes extras
        return float(values[best[0]]), [
            Column(i, float(cost[i, b]), np.array([b]), b, np.array([float(size[i, b])]))
            for b in best
        ]

    # the last bin holds everything at a high cost: the initial columns are feasible
    initial = [
        Column(
            i,
            float(cost[i, -1]),
            np.array([n_bins - 1]),
            n_bins - 1,
            np.array([float(size[i, -1])]),
        )
        for i in range(n_items)
    ]
    return DantzigWolfeProblem(
        n_blocks=n_items, capacity=cap, price=price, initial=initial, objective_step=1.0
    )


def _gap_data(rng: np.random.Generator):
    """(cost, size, capacity) of 5 items and 3 bins; the last bin holds everything, dearly."""
    n_items, n_bins = 5, 3
    cost = rng.integers(1, 10, size=(n_items, n_bins)).astype(float)
    cost[:, -1] = 50.0
    size = rng.integers(1, 5, size=(n_items, n_bins)).astype(float)
    cap = np.array([float(rng.integers(2, 8)), float(rng.integers(2, 8)), 100.0])
    return cost, size, cap


@given(st.integers(0, 10_000))
def test_engine_bounds_and_solves_a_generalized_assignment(seed):
    rng = np.random.default_rng(seed)
    cost, size, cap = _gap_data(rng)
    n_items, n_bins = cost.shape
    best = min(
        sum(cost[i, b] for i, b in enumerate(a))
        for a in itertools.product(range(n_bins), repeat=n_items)
        if all(sum(size[i, b] for i, b in enumerate(a) if b == k) <= cap[k] for k in range(n_bins))
    )
    problem = _gap_problem(cost, size, cap)
    raw = solve_colgen(problem, SolverOptions(time_limit=30))
    chosen = raw.solution.columns
    assert sorted(c.block for c in chosen) == list(range(n_items))  # one column per block
    used = np.zeros(n_bins)
    for c in chosen:
        used[c.payload] += size[c.block, c.payload]
    assert np.all(used <= cap)  # the returned solution is feasible
    assert close(sum(c.cost for c in chosen), raw.objective)
    assert raw.bound <= best + 1e-9 <= raw.objective + 2e-9
    if raw.status == Status.OPTIMAL:
        assert close(raw.objective, best)


@given(st.integers(0, 10_000), st.integers(1, 4))
def test_rows_no_column_uses_change_nothing_and_the_master_lp_is_the_full_lps(seed, unused):
    """The master adds a coupling row with the first column that uses it: rows no column can
    use (``unused`` more bins nobody fits) leave the master LP's optimum as it is, and it is
    the optimum of the LP over every column, solved whole."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    cost, size, cap = _gap_data(rng)
    n_items, n_bins = cost.shape
    run, columns, lam = lp_relaxation(_gap_problem(cost, size, cap))
    base = _gap_problem(cost, size, cap)
    padded = dataclasses.replace(
        base,
        capacity=np.concatenate([cap, rng.integers(0, 5, size=unused).astype(float)]),
        price=lambda i, pi, *rest: base.price(i, pi[:n_bins], *rest),  # no column uses the rest
    )
    run_padded, _, _ = lp_relaxation(padded)
    # the LP over all n_items x n_bins columns: one per item, the bins' capacities
    a_eq = np.kron(np.eye(n_items), np.ones(n_bins))
    a_ub = np.hstack([np.diag(size[i]) for i in range(n_items)])
    whole = linprog(cost.ravel(), A_ub=a_ub, b_ub=cap, A_eq=a_eq, b_eq=np.ones(n_items))
    assert whole.status == 0
    assert close(run.lp, whole.fun) and close(run_padded.lp, whole.fun)
    used = np.zeros(n_bins)
    for col, x in zip(columns, lam):
        if not col.artificial:
            used[col.payload] += x * size[col.block, col.payload]
    assert np.all(used <= cap + 1e-7)  # the master's solution keeps every row


def test_a_deadline_passed_mid_round_stops_the_pricing_and_keeps_the_formulation_bound():
    """The clock is read before each block is priced: a round the limit cuts short prices no
    further block, proves nothing, and the bound is the formulation's own (``lower_bound``)."""
    rng = np.random.default_rng(3)
    cost = rng.integers(1, 10, size=(6, 3)).astype(float)
    cost[:, -1] = 50.0
    size = rng.integers(1, 5, size=(6, 3)).astype(float)
    problem = _gap_problem(cost, size, np.array([4.0, 4.0, 100.0]))
    priced, plain = [], problem.price

    def slow_price(i, *args):
        priced.append(i)
        if i == 1:  # the limit passes while block 1 is priced
            end = time.perf_counter() + 0.6
            while time.perf_counter() < end:
                pass
        return plain(i, *args)

    problem.price = slow_price
    problem.lower_bound = float(cost.min(axis=1).sum())  # each item in its cheapest bin
    raw = solve_colgen(problem, SolverOptions(time_limit=0.3))
    assert priced == [0, 1]
    assert raw.status == Status.TIME_LIMIT and raw.bound == problem.lower_bound
    assert raw.objective == sum(c.cost for c in problem.initial)  # the initial columns


@given(st.integers(0, 10_000), st.integers(0, 6))
def test_reduced_cost_fixing_keeps_every_solution_within_the_target(seed, slack):
    """For any row prices pi >= 0 (every pi gives a Lagrangian bound) and any target, the cost
    ranges of reduced-cost fixing contain every column of every solution costing <= target."""
    rng = np.random.default_rng(seed)
    n_items, n_bins = 4, 3
    cost = rng.integers(1, 10, size=(n_items, n_bins)).astype(float)
    size = rng.integers(1, 5, size=(n_items, n_bins)).astype(float)
    cap = np.array([float(rng.integers(2, 8)) for _ in range(n_bins)])
    solutions = [
        a
        for a in itertools.product(range(n_bins), repeat=n_items)
        if all(sum(size[i, b] for i, b in enumerate(a) if b == k) <= cap[k] for k in range(n_bins))
    ]
    if not solutions:
        return
    best = min(sum(cost[i, b] for i, b in enumerate(a)) for a in solutions)
    target = best + slack
    pi = rng.uniform(0, 3, size=n_bins) * rng.integers(0, 2, size=n_bins)  # some rows unpriced
    problem = _gap_problem(cost, size, cap)
    ranges = fix_cost_ranges(problem, pi, target, 0.5, math.inf)
    for a in solutions:
        if sum(cost[i, b] for i, b in enumerate(a)) <= target:
            for i, b in enumerate(a):
                lo, hi = ranges.get(i, (-math.inf, math.inf))
                assert lo < cost[i, b] <= hi, (i, b, cost[i, b], ranges.get(i))


def test_reduced_cost_fixing_cuts_what_cannot_beat_the_target():
    # item 0: cost 1 in bin 0, 100 in bin 1; with no row priced, a solution of cost <= 5 has
    # item 0 in bin 0, so its range must leave out 100 (and keep 1)
    cost = np.array([[1.0, 100.0], [2.0, 3.0]])
    size = np.ones((2, 2))
    problem = _gap_problem(cost, size, np.array([2.0, 2.0]))
    ranges = fix_cost_ranges(problem, np.zeros(2), 5.0, 0.5, math.inf)
    lo, hi = ranges[0]
    assert lo < 1.0 <= hi < 100.0


def test_engine_stopped_by_the_clock_is_never_optimal():
    rng = np.random.default_rng(3)
    cost = rng.integers(1, 10, size=(40, 6)).astype(float)
    cost[:, -1] = 50.0
    size = rng.integers(1, 5, size=(40, 6)).astype(float)
    problem = _gap_problem(cost, size, np.array([6.0] * 5 + [1000.0]))
    raw = solve_colgen(problem, SolverOptions(time_limit=0.0))
    assert raw.status == Status.TIME_LIMIT and (raw.bound is None or raw.bound < raw.objective)


# ---- hare-sched on colgen

SOME = CERTIFIED[::3]


@pytest.mark.parametrize("name", SOME)
def test_colgen_brackets_the_manifest_optimum(name):
    inst = load_instance(instance_path(name))
    r = solve(inst, "hare-sched", "colgen", time_limit=5)
    opt = MANIFEST[name]["optimum"]
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT), (
        r.notes
    )  # the clock may stop it
    assert (
        r.bound <= opt + 1e-6 <= r.objective + 2e-6
    )  # the Lagrangian bound below, the schedule above
    assert validate(inst, r.solution).valid
    if r.status == Status.OPTIMAL:
        assert close(r.objective, opt) and close(r.bound, opt)
    else:
        assert r.gap > 0


def test_colgen_proves_some_optima_and_agrees_with_cpsat():
    proved = 0
    for name in CERTIFIED[:12]:
        inst = load_instance(instance_path(name))
        r = solve(inst, "hare-sched", "colgen", time_limit=5)
        if r.status == Status.OPTIMAL:
            proved += 1
            assert close(r.objective, MANIFEST[name]["optimum"])
        else:  # not proven in 5 s: still a schedule and a bound around the optimum
            assert r.bound <= MANIFEST[name]["optimum"] + 1e-6 <= r.objective + 2e-6
        if proved == 3:  # enough: the rest ran to their limit (most of this test's time)
            break
    assert proved >= 3  # 16 of the 36 proven optima are met at the root (README "Exact methods")


@settings(max_examples=8, deadline=None)  # up to 5 s each where column generation is cut short
@given(hare_instances(max_tasks=6))
def test_colgen_bound_is_below_the_cpsat_optimum(inst):
    a = solve(inst, "hare-sched", "cpsat", time_limit=60)
    b = solve(inst, "hare-sched", "colgen", time_limit=5)
    assert a.status == Status.OPTIMAL
    assert b.bound <= a.objective + 1e-6 <= b.objective + 2e-6
    if b.status == Status.OPTIMAL:
        assert close(a.objective, b.objective)


def test_colgen_root_bound_is_far_tighter_than_cpsat_on_a_ladder_instance():
    """The root's Lagrangian bound, column generation run to its end (no clock: the check does
    not depend on the machine's speed), on a 24-task ladder. CP-SAT's bound there stays at the
    trivial one; the best known schedule (CP-SAT, 60 s) is 163.1, and no schedule beats a bound."""
    inst = ladder(24, 4, seed=0)
    problem = find_formulation("hare-sched", "colgen").build(inst)
    run, _, _ = lp_relaxation(problem)
    assert run.end == "done"
    assert 159.9 <= run.bound / problem.objective_divisor <= 163.1 + 1e-6


def test_colgen_on_a_ladder_instance_stops_at_its_limit_with_a_valid_schedule_and_bound():
    inst = ladder(24, 4, seed=0)
    b = solve(inst, "hare-sched", "colgen", time_limit=15)
    assert b.status == Status.TIME_LIMIT and b.validation.valid
    assert b.bound <= 163.1 + 1e-6 <= b.objective + 1e-6


def test_the_integer_master_switches_off_probing_by_its_name_in_the_installed_highs(capfd):
    """``PRESOLVE_PROBING`` is a bit of HiGHS's ``presolve_rule_off``; HiGHS names the rules it
    was told to skip in its log, so a HiGHS that numbers its rules otherwise fails here."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("log_to_console", True)
    h.setOptionValue("presolve_rule_off", PRESOLVE_PROBING)
    h.addVar(0.0, 1.0)
    h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
    h.changeColCost(0, 1.0)
    h.run()
    log = capfd.readouterr().out
    assert f"(bit {PRESOLVE_PROBING}): Probing" in log, log


def test_colgen_time_limited_is_never_optimal():
    # 15 s: building the model (its list-schedule incumbent: ~5 CPU s here) must fit in the limit, or
    # the result is a time limit without solution (tests/core/test_deadline.py); 64 tasks are far from proven
    r = solve(ladder(64, 4, seed=1), "hare-sched", "colgen", time_limit=15.0)
    assert r.status == Status.TIME_LIMIT
    assert r.validation.valid and r.gap > 0 and r.bound < r.objective


def test_colgen_refuses_times_it_cannot_scale_exactly(tmp_path):
    import dataclasses

    from hetsched.core.errors import HetschedError

    inst = load_instance(instance_path("small-00.json"))
    job = inst.jobs[0]
    odd = dataclasses.replace(job, train_time={k: v + 1e-7 for k, v in job.train_time.items()})
    with pytest.raises(HetschedError, match="4 decimal digits"):
        solve(dataclasses.replace(inst, jobs=(odd,) + inst.jobs[1:]), "hare-sched", "colgen")


# ---- the local search that bounds the windows


def test_local_search_is_seeded_valid_and_no_worse_than_one_list_schedule():
    inst = ladder(32, 4, seed=2)
    quick, _ = quick_upper_bound(inst)
    a, sa = local_search_upper_bound(inst, 3000, seed=5)
    b, sb = local_search_upper_bound(inst, 3000, seed=5)
    assert a == b and sa == sb
    report = validate(inst, sa)
    assert report.valid and close(report.objective, a)
    assert a <= quick + 1e-9


def test_branch_and_price_proves_what_the_root_cannot_and_agrees_with_cpsat():
    inst = ladder(8, 2, seed=0)  # root bound 36.15 < 36.6: only branching closes the gap
    b = solve(inst, "hare-sched", "colgen", time_limit=60)
    a = solve(inst, "hare-sched", "cpsat", time_limit=60)
    assert a.status == b.status == Status.OPTIMAL
    assert close(a.objective, b.objective) and b.validation.valid
    assert "branch-and-price" in b.log and " 0 nodes" not in b.log


@pytest.mark.parametrize("prove", [True, pytest.param(False, marks=pytest.mark.deep)])
def test_a_hint_better_than_the_local_search_sets_the_windows_and_the_incumbent(prove):
    """hare-sched (colgen) given an optimal schedule (CP-SAT's, proven) starts from it, and the
    run proves that optimum, with or without its searches for schedules (prove: no dive and no
    integer master, the bound alone closes it; with them, 20 CPU s: under ``-m deep``); a hint
    that is not a schedule is refused."""
    inst = load_instance(instance_path("hare_fig9.json"))
    proven = solve(inst, "hare-sched", "cpsat")
    assert proven.status == Status.OPTIMAL
    spec = find_formulation("hare-sched", "colgen")
    problem = spec.build(inst, hint=proven.solution)
    ub = sum(c.cost for c in problem.initial) / problem.objective_divisor
    assert ub == pytest.approx(proven.objective)
    res = solve(inst, spec, "colgen", options={"hint": proven.solution, "prove": prove})
    assert res.status == Status.OPTIMAL and res.objective == pytest.approx(proven.objective)
    with pytest.raises(Exception, match="hint takes a task schedule"):
        spec.build(inst, hint="schedule.json")


def test_a_hint_in_seconds_becomes_a_valid_schedule_on_integer_ticks():
    from hetsched.core.scaling import instance_in_ticks
    from hetsched.hare.upper_bound import hint_in_ticks
    from hetsched.schedule.model import TaskSchedule

    inst = ladder(16, 4, seed=1)
    value, schedule = quick_upper_bound(inst)
    ticked = instance_in_ticks(inst, 10)
    got = hint_in_ticks(ticked, schedule, 10)
    assert got is not None
    objective, moved = got
    assert np.array_equal(moved.start, np.rint(moved.start))
    assert objective <= value * 10 + 1e-6  # started as early as allowed: never later
    missing = TaskSchedule.of(schedule.assignments[:-1], schedule.instance)  # a task left out
    assert hint_in_ticks(ticked, missing, 10) is None


@settings(max_examples=20, deadline=None)
@given(hare_instances(max_jobs=4, max_tasks=8))
def test_the_first_prices_already_bound_above_the_interval_lp(inst):
    """The master starts from the interval LP's capacity duals, mapped onto GPU ticks: each job's
    least priced schedule there costs at least its part of the LP, so the Lagrangian bound at
    those prices is at least the LP's bound (and at most the optimum, as every Lagrangian)."""
    problem = find_formulation("hare-sched", "colgen").build(inst, prove=True)
    pi = problem.initial_prices
    assert pi is not None and np.all(pi >= 0) and pi.shape == problem.capacity.shape
    prepared = problem.prepare(pi)
    lagrangian = sum(problem.price(b, prepared)[0] for b in range(problem.n_blocks))
    lagrangian = (lagrangian - float(pi @ problem.capacity)) / problem.objective_divisor
    lp = solve(inst, "hare-interval-lp", "highs-lp")
    assert lagrangian >= lp.bound - 1e-6 * max(1.0, lp.bound)
    optimum = solve(inst, "hare-sched", "cpsat", time_limit=60)
    assert optimum.status == Status.OPTIMAL
    assert lagrangian <= optimum.objective + 1e-6
    # a root stopped after its first round keeps that bound (it priced at these prices first)
    problem.max_iterations = 1
    run, _, _ = lp_relaxation(problem)
    assert run.bound / problem.objective_divisor >= lagrangian - 1e-9 * max(1.0, lagrangian)
