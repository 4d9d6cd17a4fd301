"""The two exact methods agree on every shipped instance; every result is validated."""

import dataclasses

import pytest
from hypothesis import given
from support import CERTIFIED, INSTANCES, MANIFEST, instance_path

from hetsched.exact.solve import solve
from hetsched.instance.generators import ladder
from hetsched.instance.io import load_instance
from hetsched.schedule.validate import validate
from hetsched.solvers import Status
from hetsched.testing.strategies import hare_instances


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def test_manifest_covers_at_least_30_small_instances():
    assert sum(k.startswith("small-") for k in CERTIFIED) >= 30


def _exact_cases():
    """CP-SAT on every certified instance, and a second exact method on each: the time-indexed
    MILP where it proved the instance in at most TI_FAST_SECONDS when the instance was
    certified; else the big-M MILP (<= 10 tasks, ``test_paper_big_m_milp_agrees_where_it_proves``)
    or branch-and-price over job schedules (colgen, 2-6x faster than TI there). The slow TI runs
    are in the deep set (``-m deep``): together they took 8 of the default run's 14 minutes."""
    for name in CERTIFIED:
        yield pytest.param(name, "hare-sched", "cpsat", id=f"hare-sched-cpsat-{name}")
        ti_seconds = MANIFEST[name]["runs"].get("hare-sched-ti/highs", {}).get("seconds", 0.0)
        slow = ti_seconds > TI_FAST_SECONDS
        yield pytest.param(
            name,
            "hare-sched-ti",
            "highs",
            id=f"hare-sched-ti-highs-{name}",
            marks=[pytest.mark.deep] if slow else [],
        )
        if slow and MANIFEST[name]["tasks"] > BIG_M_TASKS:
            yield pytest.param(name, "hare-sched", "colgen", id=f"hare-sched-colgen-{name}")


TI_FAST_SECONDS = 5.0
BIG_M_TASKS = 10


@pytest.mark.parametrize("name,model,solver", list(_exact_cases()))
def test_exact_methods_prove_the_manifest_optimum(name, model, solver):
    inst = load_instance(instance_path(name))
    r = solve(
        inst, model, solver
    )  # no clock: the proof's length never depends on the machine's load
    assert r.status == Status.OPTIMAL, r.notes
    assert close(r.objective, MANIFEST[name]["optimum"])
    assert close(r.bound, r.objective) and r.gap <= 1e-9  # solver tolerance, not slack
    report = validate(inst, r.solution)  # independently of solve()'s own check
    assert report.valid and close(report.objective, r.objective)


@pytest.mark.parametrize("name", [k for k in CERTIFIED if MANIFEST[k]["tasks"] <= BIG_M_TASKS])
def test_paper_big_m_milp_agrees_where_it_proves(name):
    inst = load_instance(instance_path(name))
    r = solve(inst, "hare-sched", "highs")  # no clock (<= 10 tasks: proven in seconds)
    assert r.status == Status.OPTIMAL and close(r.objective, MANIFEST[name]["optimum"])


def test_paper_big_m_milp_time_limited_is_consistent_with_the_optimum():
    name = "small-00.json"
    inst = load_instance(instance_path(name))
    r = solve(inst, "hare-sched", "highs", time_limit=1.0)
    opt = MANIFEST[name]["optimum"]
    assert r.status == Status.TIME_LIMIT  # never "optimal" when stopped by the clock
    # what it reports is consistent with the optimum (a loaded machine may reach no incumbent,
    # or not even the root's bound, within 1 s)
    assert r.bound is None or r.bound <= opt + 1e-6
    assert r.objective is None or (r.objective >= opt - 1e-6 and r.gap > 0)


@pytest.mark.parametrize("model,solver", [("hare-sched", "cpsat"), ("hare-sched", "highs")])
def test_time_limited_result_is_never_optimal(model, solver):
    # the limit covers building the model and handing it to the solver (for the big-M MILP here
    # ~1.5 + 1.8 CPU s; a limit shorter than that gives no solution, see test_deadline.py): the
    # solver gets the rest, far too little to prove 64 tasks
    r = solve(ladder(64, 4, seed=1), model, solver, time_limit=10.0)
    assert r.status == Status.TIME_LIMIT
    assert r.validation.valid and r.gap > 0


@given(hare_instances(max_tasks=6))
def test_exact_methods_agree_on_random_instances(inst):
    a = solve(inst, "hare-sched", "cpsat", time_limit=60)
    b = solve(inst, "hare-sched-ti", "highs", time_limit=60)
    assert a.status == b.status == Status.OPTIMAL
    assert close(a.objective, b.objective)


def test_cpsat_rounding_is_reported_and_its_bound_stays_valid():
    """Times in thirds of a second cannot be scaled exactly: CP-SAT rounds up, says so, and
    never claims optimality; its bound stays below the exact optimum of the real problem."""
    inst = load_instance(INSTANCES / "paper" / "hare_fig5.json")
    jobs = tuple(
        dataclasses.replace(j, train_time={"gpu": j.train_time["gpu"] + 1 / 3}) for j in inst.jobs
    )
    thirds = dataclasses.replace(inst, jobs=jobs)
    r = solve(thirds, "hare-sched", "cpsat")
    assert r.status == Status.FEASIBLE
    assert any("not exact" in n for n in r.notes)
    exact = solve(thirds, "hare-sched", "highs")  # the big-M MILP takes real times
    assert exact.status == Status.OPTIMAL
    assert r.bound <= exact.objective + 1e-6 <= r.objective + 2e-6


def test_a_model_missing_a_constraint_is_caught_not_reported():
    """Drop the barrier (7) from the time-indexed model: the solver then claims a cost its own
    schedule does not have (or the schedule breaks the barrier); solve() must say error."""
    from hetsched.exact.spec import FormulationSpec
    from hetsched.models import hare_sched_ti as ti

    def build_without_barrier(inst):
        m = ti.build(inst)
        m.barrier.deactivate()
        return m

    broken = FormulationSpec("broken", "pyomo", build_without_barrier, ti.extract)
    r = solve(load_instance(INSTANCES / "paper" / "hare_fig9.json"), broken, "highs", time_limit=60)
    assert r.status == Status.ERROR
    assert any("validation" in n or "disagree" in n for n in r.notes)


@pytest.mark.parametrize("solver", ["cpsat", "portfolio"])
def test_every_schedule_names_its_instance(solver):
    """A solution names the instance and its content hash (how `hetsched show` finds the
    instance), whichever method made it: the portfolio's list and serial schedules did not."""
    from hetsched.instance.io import instance_hash

    inst = load_instance(INSTANCES / "paper" / "hare_fig5.json")
    res = solve(inst, "hare-sched", solver, time_limit=60)
    assert res.solution.instance == inst.name
    assert res.solution.instance_hash == instance_hash(inst)


def test_a_run_stopped_at_its_gap_limit_is_feasible_not_optimal():
    """HiGHS ends a MIP that meets ``gap`` with its 'optimal' code; the result says what it is:
    a solution and a bound 25% apart are not a proof (they were reported optimal before)."""
    inst = load_instance(instance_path("small-21.json"))
    r = solve(inst, "hare-sched-rl", "highs", time_limit=30, threads=1, gap=0.25)
    assert r.status == Status.FEASIBLE and r.gap is not None and 0 < r.gap <= 0.25 + 1e-9
    assert r.bound <= MANIFEST["small-21.json"]["optimum"] * (1 + 1e-6)
    assert any("stopped at the gap limit" in n for n in r.notes)
