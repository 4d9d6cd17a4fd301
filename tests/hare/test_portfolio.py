"""Anytime answers for Hare_Sched (issue 44): the portfolio (``--solver auto`` on hare-sched)
returns a validated schedule and a proven bound on every instance, the best of its methods:
bound <= optimum <= schedule on the certified instances, the optimum itself with no clock."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
from support import CERTIFIED, INSTANCES, MANIFEST, instance_path

from hetsched.cli import main
from hetsched.exact.solve import solve
from hetsched.hare.quick_bounds import cluster_bound, job_bound
from hetsched.instance.generators import generate, pm_wct
from hetsched.instance.io import load_instance
from hetsched.schedule.validate import validate
from hetsched.solvers import Status

TOL = 1e-6


@pytest.mark.parametrize("name", [n for n in CERTIFIED if MANIFEST[n]["tasks"] <= 12][:6])
def test_the_portfolio_proves_the_certified_optimum(name):
    inst = load_instance(instance_path(name))
    opt = MANIFEST[name]["optimum"]
    res = solve(inst, "hare-sched", "portfolio")  # no clock: it runs its exact method to the end
    assert res.status == Status.OPTIMAL, res.log
    assert res.objective == pytest.approx(opt, abs=TOL) and res.bound == pytest.approx(opt, abs=TOL)
    report = validate(inst, res.solution)  # independently of solve()'s own check
    assert report.valid and report.objective == pytest.approx(res.objective, abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_a_time_limited_portfolio_still_has_a_schedule_and_a_bound(seed):
    """However early the clock stops it, the list schedules and the per-job bound come first."""
    inst = generate("hare-random", seed=seed, n_jobs=10, n_gpus=4)
    res = solve(inst, "hare-sched", "portfolio", time_limit=1.0)
    assert res.status in (Status.TIME_LIMIT, Status.FEASIBLE, Status.OPTIMAL), res.log
    assert res.solution is not None and res.validation.valid
    assert 0 < job_bound(inst) <= res.bound <= res.objective + TOL


def test_the_per_job_bound_is_below_every_optimum():
    for name in CERTIFIED:
        inst = load_instance(instance_path(name))
        assert job_bound(inst) <= MANIFEST[name]["optimum"] + TOL


def test_solve_of_an_instance_no_exact_model_takes_answers_with_a_schedule(tmp_path):
    """Issue 44: at 20 jobs x 16 GPUs of Hare's mix, solve gave status error, no schedule and
    bound 0; now a validated schedule and a positive bound, as one JSON object."""
    inst = tmp_path / "t2.json"
    out = io.StringIO()
    argv = ["generate", "hare-table2", "--jobs", "20", "--gpus", "16", "--seed", "0"]
    assert main([*argv, "--out", str(inst)]) == 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["solve", str(inst), "--time-limit", "3", "--json"])
    d = json.loads(out.getvalue())
    assert code == 0 and d["solver"] == "portfolio" and d["validation"]["valid"]
    assert d["status"] in ("time_limit", "feasible") and 0 < d["bound"] <= d["objective"]


def test_the_cluster_bound_is_below_every_proven_optimum():
    wct = json.loads((INSTANCES / "wct" / "manifest.json").read_text())["instances"]
    cases = [(instance_path(n), MANIFEST[n]["optimum"]) for n in CERTIFIED]
    cases += [(INSTANCES / "wct" / n, e["optimum"]) for n, e in wct.items()]
    for path, opt in cases:
        assert cluster_bound(load_instance(path)) <= opt + TOL, path


@pytest.mark.parametrize("seed", range(5))
def test_the_cluster_bound_is_smiths_rule_on_one_machine(seed):
    """1||sum w_j C_j (one GPU, one task per job, all at time 0): the bound is the optimum,
    which Smith's rule (WSPT, 1956) gives in closed form."""
    inst = pm_wct(seed, n_jobs=12, n_gpus=1)
    jobs = sorted(
        ((min(j.train_time.values()), j.weight) for j in inst.jobs), key=lambda pw: pw[0] / pw[1]
    )
    t, smith = 0.0, 0.0
    for p, w in jobs:
        t += p
        smith += w * t
    assert all(j.arrival == 0 for j in inst.jobs)
    assert cluster_bound(inst) == pytest.approx(smith, rel=1e-12)


@pytest.mark.parametrize("name", [n for n in CERTIFIED if MANIFEST[n]["tasks"] <= 12][:4])
def test_the_interval_mip_step_keeps_the_bound_between_the_lp_and_the_optimum(name):
    """The bound chain's MIP (bound_chain docstring): the bound it leaves is at least the LP's
    and at most the optimum, whether or not its budget stopped it; its order is a job
    permutation."""
    from hetsched.hare.bound_chain import Bounds, interval_mip

    inst = load_instance(instance_path(name))
    opt = MANIFEST[name]["optimum"]
    lp = solve(inst, "hare-interval-lp", "auto").objective
    out = Bounds(bound=lp)
    interval_mip(inst, 60.0, out)
    assert lp <= out.bound <= opt + TOL * max(1.0, opt)
    assert out.notes and out.notes[-1].startswith("interval MIP")
    assert all(sorted(o.tolist()) == list(range(len(inst.jobs))) for o in out.orders)


@pytest.mark.parametrize("name", [n for n in CERTIFIED if MANIFEST[n]["tasks"] <= 12][:2])
def test_the_bound_chain_in_a_second_process_is_combined_or_stopped(name):
    """With two cores the bound chain runs in a second process (forced here by a threshold of
    zero, so with a short limit): the result is still a validated schedule beside a bound at
    most the optimum; the chain's notes are in the log or, if its LP had not ended by the limit
    (a loaded machine), the note that it was stopped; no worker outlives the call."""
    import multiprocessing
    import os

    from hetsched.hare.portfolio import anytime
    from hetsched.solvers.result import SolverOptions

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the portfolio runs in one process")
    inst = load_instance(instance_path(name))
    opt = MANIFEST[name]["optimum"]
    res = anytime(inst, SolverOptions(time_limit=4.0, threads=2), parallel=True)
    assert "bound chain in a second process" in res.log
    assert "interval LP: " in res.log or "lp stage: stopped" in res.log, res.log
    report = validate(inst, res.solution)
    assert report.valid and report.objective == pytest.approx(res.objective, abs=TOL)
    assert job_bound(inst) - TOL <= res.bound <= opt + TOL * max(1.0, opt)
    assert not multiprocessing.active_children()


def test_where_the_exact_step_follows_the_first_search_is_only_its_start(monkeypatch):
    """On an instance the exact step takes, the job-order search before it evaluates at most
    SEARCH_EVALUATIONS schedules, whatever the limit: the step proves hare_fig5 at once (the
    search ran 27 s of a 60 s limit before it); no search runs after the proof."""
    from hetsched.hare import portfolio
    from hetsched.solvers.result import SolverOptions

    calls = []

    def recording(view, orders, seed=0, evaluations=1000, keep_going=None):
        calls.append(evaluations)
        return serial_search(view, orders, seed, evaluations, keep_going)

    serial_search = portfolio.serial_search
    monkeypatch.setattr(portfolio, "serial_search", recording)
    inst = load_instance(INSTANCES / "paper" / "hare_fig5.json")
    res = portfolio.anytime(inst, SolverOptions(time_limit=600.0, threads=2), parallel=False)
    assert calls == [portfolio.SEARCH_EVALUATIONS]
    assert res.status == Status.OPTIMAL and res.objective == MANIFEST["hare_fig5.json"]["optimum"]


def test_where_the_mip_is_left_out_the_second_process_searches(monkeypatch):
    """With the MIP left out (forced: no indicator allowed), the second process runs a
    job-order search from the LP's order; its schedule is rebuilt and validated here. (12 s:
    the LP stage ends after the second process has loaded the registry, 4-7 s in; with less
    than a second left before 0.9 of the limit the search is left out, and says so.)"""
    import os

    from hetsched.hare import bound_chain
    from hetsched.hare.portfolio import anytime
    from hetsched.solvers.result import SolverOptions

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the portfolio runs in one process")
    monkeypatch.setattr(bound_chain, "MIP_MAX_CELLS", -1)
    inst = generate("hare-table2", seed=0, n_jobs=6, n_gpus=8)
    res = anytime(inst, SolverOptions(time_limit=12.0, threads=2), parallel=True)
    report = validate(inst, res.solution)
    assert report.valid and report.objective == pytest.approx(res.objective, rel=1e-9)
    assert job_bound(inst) <= res.bound <= res.objective
    if "interval LP: bound" in res.log:  # the LP ended in its share (not on a loaded machine)
        assert "interval MIP: left out" in res.log
        assert "job-order search in the second process" in res.log or "stage: stopped" in res.log


def test_the_portfolios_default_grid_is_the_interval_lps():
    """The portfolio sizes the MIP from the LP's grid by the ratio of the two growths."""
    from hetsched.hare import bound_chain
    from hetsched.models import hare_interval_lp

    assert bound_chain.DEFAULT_EPSILON == hare_interval_lp.EPSILON
    assert 0 < bound_chain.FINE_EPSILON < bound_chain.DEFAULT_EPSILON


def test_the_mip_grid_is_the_finest_that_fits():
    """mip_grid: the finest of MIP_GRIDS whose indicators fit the cap and the budget; none (with
    the reason) past the coarsest, or with no limit."""
    from hetsched.hare.bound_chain import MIP_CELLS_PER_SECOND, MIP_GRIDS, mip_grid

    assert mip_grid(1000, 0.05, 10, 60.0) == (0.05, "")
    # 15,000 pairs at eps 0.05 (the paper's scale): only a coarser grid fits 48 s
    eps, _ = mip_grid(15000, 0.05, 200, 48.0)
    assert eps is not None and eps > 0.05
    assert mip_grid(15000, 0.05, 200, 48.0 * 1000)[0] == eps  # the cap, not the budget
    eps, why = mip_grid(10**6, 0.05, 200, 10**6 / MIP_CELLS_PER_SECOND)
    assert eps is None and f"eps {MIP_GRIDS[-1]}" in why
    assert mip_grid(10, 0.05, 1, None) == (None, "no time limit to stop it")


@pytest.mark.parametrize("eps", [0.05, 0.2])
def test_the_lp_counts_the_mips_indicators(eps):
    """The LP's (job, interval) pairs are the MIP's indicators on the same grid, and the count
    on another grid is estimated within 10% and a pair a job."""
    from hetsched.hare.bound_chain import MIP_CELLS_PER_SECOND as RATE
    from hetsched.hare.bound_chain import mip_grid
    from hetsched.models.hare_interval_mip import build as build_mip

    inst = generate("hare-table2", seed=1, n_jobs=6, n_gpus=8)
    cells = solve(inst, "hare-interval-lp", "auto", options={"eps": 0.05}).solution.cells
    indicators = len(build_mip(inst, eps=eps).NL)
    if eps == 0.05:
        assert cells == indicators
    jobs = len(inst.jobs)
    budget = indicators / RATE  # the budget where the grid eps just fits
    assert mip_grid(cells, 0.05, jobs, budget * 1.1 + jobs / RATE)[0] == eps


def test_after_the_mip_the_second_process_bounds_or_searches(monkeypatch):
    """The second process's stages (portfolio._SecondProcess): when the MIP stage is taken, the
    bucketed job-schedule master starts there from the run's best schedule where the instance
    has at most BUCKETS_MAX_TASKS tasks, and otherwise a job-order search from the MIP's order
    and the run's best order, until PARALLEL_END of the limit; taken at the limit, no stage
    starts."""
    import time
    from concurrent.futures import Future

    from hetsched.hare import portfolio
    from hetsched.hare.bound_chain import Bounds
    from hetsched.hare.serial import SerialRun, search_until, serial_schedule
    from hetsched.hare.view import hare_view

    class Pool:  # what WorkerPool offers, run at once in this process, each call recorded
        def __init__(self):
            self.calls = []

        def submit(self, fn, task):
            self.calls.append((fn, task))
            done = Future()
            done.set_result(Bounds() if fn is portfolio.bound_chain else None)
            return done

    inst = generate("hare-table2", seed=0, n_jobs=6, n_gpus=8)
    run = portfolio._Run(inst, hare_view(inst))
    best = np.arange(len(inst.jobs))[::-1].copy()
    start, gpu = serial_schedule(run.view, best)
    run.offer_arrays("job-order search", SerialRun(1e9, best, start, gpu))
    mip_order = np.arange(len(inst.jobs))
    cases = ((100.0, 10**9, "buckets"), (100.0, 100, "search"), (1e-3, 10**9, None))
    for limit, most_tasks, stage in cases:
        monkeypatch.setattr(portfolio, "BUCKETS_MAX_TASKS", most_tasks)
        pool = Pool()
        second = portfolio._SecondProcess(pool, inst, limit, time.perf_counter(), seed=0)
        done = Future()
        done.set_result(Bounds(bound=1.0, orders=[mip_order]))
        second.future, second.stage = done, "mip"
        second.take(run)
        assert run.bound >= 1.0
        fn, task = pool.calls[-1]
        if stage is None:  # nothing started after the LP of the constructor
            assert fn is portfolio.bound_chain and task.steps == ("lp",)
            continue
        assert second.stage == stage and not second.mip_running()
        assert task.until <= time.time() + portfolio.PARALLEL_END * limit
        if stage == "search":
            assert fn is search_until
            assert any(np.array_equal(o, mip_order) for o in task.orders)
            assert any(np.array_equal(o, best) for o in task.orders)
        else:
            assert fn is portfolio.bound_chain and task.steps == ("buckets",)
            assert task.hint is run.best[2]
