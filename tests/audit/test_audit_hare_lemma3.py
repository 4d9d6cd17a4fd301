"""Hare's Lemma 3 (HPDC'22, (14)-(20)): the paper's step (16) fails, the repaired proof holds.

See proofs/hare_lemma3.md. The steps are checked as LHS/RHS ratios by
:func:`hetsched.audit.hare_lemma3.step_checks` (> 1 means the inequality fails).
"""

import pytest
from hypothesis import given
from support import instance_path

from hetsched.audit.hare import proof_checks
from hetsched.audit.hare_lemma3 import idle_gaps, step_checks
from hetsched.exact.solve import solve
from hetsched.hare.algorithm1 import alpha, hare_alg1, task_priorities
from hetsched.hare.orderings import starts_in_d_order
from hetsched.hare.view import hare_view
from hetsched.instance.io import load_instance
from hetsched.solvers import Status
from hetsched.testing.strategies import hare_instances

STEP16 = "hare_lemma3_step16.json"
# H comes from a HiGHS MILP solve, exact only up to its tolerances (absolute gap 1e-6)
TOL = 1e-6
REPAIRED = ("lemma3_15", "lemma3_17", "lemma3_gap")


def alg1_on(inst, relaxation="hare-sched-rl"):
    view = hare_view(inst)
    rl = solve(inst, relaxation, "highs", time_limit=30, threads=1)
    assert rl.status == Status.OPTIMAL
    return view, hare_alg1(view, task_priorities(view, starts_in_d_order(view, rl.solution)))


def test_step16_fails_and_so_does_the_telescoped_gap_bound_yet_lemma3_holds(manifest):
    inst = load_instance(instance_path(STEP16))
    view, run = alg1_on(inst)
    assert alpha(view) == 3.0
    assert run.priority.tolist() == pytest.approx([1.5, 3.5, 3.0])  # J0 r0, J0 r1, J1
    (gap,) = idle_gaps(view, run)  # g2 idles in [2, 4] before J0's second round
    assert (gap.task, gap.gpu, gap.prev, gap.chain, gap.waited, gap.v) == (
        1,
        1,
        2,
        (0,),
        True,
        None,
    )
    checks = step_checks(view, run)
    assert checks["lemma3_16"] == pytest.approx(2.0)  # H(J1) = 3.0 > H(u(0)) = 1.5
    assert checks["lemma3_telescope"] == pytest.approx(2 / 1.5)  # gap 2 > alpha (3.5 - 3.0)
    assert checks["lemma3_15"] <= 1  # u(0) started (at 0) before J1 ended (at 2)
    assert checks["lemma3_gap"] == pytest.approx(2 / 6)  # repaired: 2 <= alpha (3.5 - 1.5)
    assert checks["lemma3_17"] <= 1
    assert run.objective() == manifest[STEP16]["optimum"] == 9.0  # (14) holds; Alg. 1 optimal


@pytest.mark.parametrize("relaxation", ["hare-sched-rl", "hare-sched-rl-subsets"])
@given(
    inst=hare_instances(
        max_gpus=3, max_types=3, max_jobs=3, max_rounds=3, max_tasks_per_round=2, max_tasks=8
    )
)
def test_property_the_repaired_proof_steps_hold(relaxation, inst):
    """(15), (17), the repaired per-gap inequality, and (14) itself hold on every instance."""
    view, run = alg1_on(inst, relaxation)
    checks = proof_checks(view, run)
    assert checks["lemma3"] <= 1 + TOL  # (14), the lemma, which the repaired steps prove
    for name in REPAIRED:
        assert checks[name] <= 1 + TOL, name
    # every idle period's chain starts at a task that waited for a GPU or at an arrival
    for gap in idle_gaps(view, run):
        if gap.waited:
            assert run.start[gap.chain[0]] <= run.start[gap.task]
        assert gap.paper_u0 is not None or not gap.waited
