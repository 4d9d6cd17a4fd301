"""The large-neighbourhood search (hetsched/hare/lns.py) and the CP-SAT neighbourhoods it solves
(models/hare_sched_cpsat.py, option ``frozen``)."""

import numpy as np
import pytest
from support import MANIFEST, instance_path

from hetsched.core.errors import HetschedError
from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import solve
from hetsched.hare.lns import lns, neighbourhood, spans
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.instance.generators import ladder
from hetsched.instance.io import load_instance
from hetsched.schedule.validate import validate
from hetsched.solvers.cpsat import solve_cpsat
from hetsched.solvers.result import SolverOptions, Status

SPEC = find_formulation("hare-sched", "cpsat")


def rows(schedule, jobs):
    """(job, round, GPU, start) of the tasks of ``jobs`` (ids), sorted: a schedule's placement of
    them whatever the task numbering."""
    return sorted(
        (a.job, a.round, a.gpu, round(a.start, 9)) for a in schedule.assignments if a.job in jobs
    )


def test_a_neighbourhood_keeps_its_frozen_jobs_where_the_hint_has_them():
    """Freeze all jobs but one of ladder(16, 4): CP-SAT's optimum of the neighbourhood keeps the
    frozen tasks exactly (GPU and start), is valid, and costs at most the hint."""
    inst = ladder(16, 4)
    cost, hint = quick_upper_bound(inst)
    ids = [j.id for j in inst.jobs]
    frozen = ids[1:]
    problem = SPEC.build(inst, hint=hint, frozen=frozen)
    raw = solve_cpsat(problem, SolverOptions(30.0, 0.0, 1, 0))
    assert raw.status == Status.OPTIMAL
    found = SPEC.extract(problem, inst, raw.value)
    report = validate(inst, found)
    assert report.valid and report.objective <= cost + 1e-9
    assert report.objective == pytest.approx(raw.objective, abs=1e-9)
    assert rows(found, set(frozen)) == rows(hint, set(frozen))


def test_freezing_nothing_is_the_full_model():
    """With no frozen job the neighbourhood is the instance: the manifest's optimum."""
    name = "small-07.json"
    inst = load_instance(instance_path(name))
    cost, hint = quick_upper_bound(inst)
    raw = solve_cpsat(SPEC.build(inst, hint=hint, frozen=()), SolverOptions(60.0, 0.0, 2, 0))
    assert raw.status == Status.OPTIMAL
    assert raw.objective == pytest.approx(MANIFEST[name]["optimum"], abs=1e-6)


def test_solve_does_not_take_frozen_jobs():
    """A neighbourhood's optimum is not the instance's: solve() refuses the option rather than
    report it as a proof."""
    inst = ladder(8, 2)
    with pytest.raises(HetschedError, match="takes no option frozen"):
        solve(inst, "hare-sched", "cpsat", time_limit=5, options={"frozen": "J0"})


def test_frozen_jobs_need_a_hint():
    with pytest.raises(HetschedError, match="frozen jobs need a hint"):
        SPEC.build(ladder(8, 2), frozen=["J0"])


def test_a_neighbourhood_is_a_job_and_those_beside_it():
    """The drawn job and the jobs overlapping it the longest, ``size`` of them, distinct;
    the same seed draws the same."""
    span = np.array([[0.0, 10.0], [5.0, 12.0], [11.0, 20.0], [30.0, 40.0]])
    for seed in range(20):
        picked = neighbourhood(span, 2, np.random.default_rng(seed))
        assert picked == neighbourhood(span, 2, np.random.default_rng(seed))
        assert picked in ([0, 1], [1, 2], [2, 3])  # each job with the one beside it the longest
    assert neighbourhood(span, 9, np.random.default_rng(0)) == [0, 1, 2, 3]


@pytest.mark.parametrize("size", [16, 24])
def test_lns_never_loses_its_incumbent(size):
    """Counted moves (no clock): the result is valid, its objective the validator's, no worse
    than the start and no better than CP-SAT's proven optimum (16 tasks: 75.3, where every
    neighbourhood of at most 3 of the 4 jobs is solved at 76.8 after 4 moves and the search
    ends); on ladder(24, 4) it improves the list schedule."""
    inst = ladder(size, 4)
    cost, start = quick_upper_bound(inst)
    run = lns(inst, cost, start, moves=6, seed=1)
    report = validate(inst, run.schedule)
    assert report.valid and report.objective == pytest.approx(run.objective, abs=1e-9)
    assert run.objective <= cost and 1 <= run.moves <= 6
    if size == 16:
        opt = solve(inst, "hare-sched", "cpsat", time_limit=60)
        assert opt.status == Status.OPTIMAL and opt.objective <= run.objective + 1e-9
    else:
        assert run.objective < cost


def test_spans_are_first_start_and_completion():
    inst = ladder(16, 4)
    cost, sched = quick_upper_bound(inst)
    report = validate(inst, sched)
    span = spans(inst, sched, report.completion)
    for n, job in enumerate(inst.jobs):
        mine = [a.start for a in sched.assignments if a.job == job.id]
        assert span[n, 0] == min(mine) and span[n, 1] == report.completion[job.id]
