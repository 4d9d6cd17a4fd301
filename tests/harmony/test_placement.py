"""Interference-aware placement (Harmony, ToN'22): the speed model by hand, the independent
check, two exact methods (MILP on HiGHS, enumeration) agreeing, heuristics never above the
optimum, the learned predictor, input errors and the audit."""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.core.errors import HetschedError, InputError
from hetsched.exact.solve import solve
from hetsched.harmony import Placement, check_placement, data, placement_view
from hetsched.harmony.evaluate import candidate_rewards, speed_fractions
from hetsched.harmony.exhaustive import exhaustive_placement
from hetsched.harmony.generate import make_instance, random_instance
from hetsched.harmony.heuristics import (
    RULES,
    _State,
    greedy_by_reward,
    job_candidates,
    place_by_rule,
)
from hetsched.harmony.predictor import default_predictor, train_predictor
from hetsched.instance.io import instance_to_dict, load_instance, parse_instance
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy
from hetsched.solvers import Status

ROOT = Path(__file__).resolve().parents[2]
COUNTEREXAMPLE = ROOT / "instances" / "audit" / "placement_tetris_counterexample.json"


def tiny(seed: int) -> "object":
    return random_instance(
        seed, n_servers=2 + seed % 2, n_new=2, n_old=seed % 3, max_workers=2, max_ps=2
    )


def job(jid, model, workers, ps, epochs=8.0):
    return {
        "id": jid,
        "model": model,
        "workers": workers,
        "parameter_servers": ps,
        "epochs": epochs,
    }


def test_speed_model_by_hand():
    """Two single-task jobs on one server slow each other by I[a,b]; a job spread over two
    servers loses kappa; the floor f_min holds."""
    inst = make_instance("hand", 2, [job("A", "resnext110", 1, 0, 2.0), job("B", "ctc", 1, 0, 3.0)])
    both_on_s0 = Placement({"A": {"s0": (1, 0)}, "B": {"s0": (1, 0)}})
    rep = check_placement(inst, both_on_s0)
    I = data.INTERFERENCE
    assert rep.valid
    assert rep.completion["A"] == pytest.approx(2.0 * (1 - I["resnext110"]["ctc"]))
    assert rep.completion["B"] == pytest.approx(3.0 * (1 - I["ctc"]["resnext110"]))
    assert rep.objective == pytest.approx(
        (1 - I["resnext110"]["ctc"]) + (1 - I["ctc"]["resnext110"])
    )
    apart = check_placement(inst, Placement({"A": {"s0": (1, 0)}, "B": {"s1": (1, 0)}}))
    assert apart.objective == pytest.approx(2.0)
    spread = make_instance("spread", 2, [job("V", "vgg16", 2, 0, 1.0)])
    rep = check_placement(spread, Placement({"V": {"s0": (1, 0), "s1": (1, 0)}}))
    assert rep.objective == pytest.approx(
        data.STANDALONE_SPEED["vgg16"] * (1 - data.COMMUNICATION["vgg16"])
    )
    crowded = make_instance("crowded", 1, [job("A", "resnext110", 1, 0), job("B", "ctc", 1, 0)])
    d = instance_to_dict(crowded)
    d["metadata"]["placement"]["interference"] = {"resnext110": {"ctc": 0.95}}
    rep = check_placement(parse_instance(d), Placement({"A": {"s0": (1, 0)}, "B": {"s0": (1, 0)}}))
    assert rep.valid
    assert rep.completion["A"] == pytest.approx(
        data.STANDALONE_SPEED["resnext110"] * data.MIN_SPEED_FRACTION
    )


def test_validator_rejects_each_kind_of_violation():
    inst = random_instance(3, n_servers=2, n_new=2, n_old=1, max_workers=2, max_ps=2)
    v = placement_view(inst)
    new = [v.job_ids[n] for n in np.flatnonzero(v.new)]
    old = [v.job_ids[n] for n in np.flatnonzero(~v.new)]
    n0 = v.job_ids.index(new[0])
    w, p = int(v.workers[n0]), int(v.parameter_servers[n0])
    kinds = {
        "partial_job": Placement({new[0]: {"s0": (w + 1, p)}}),
        "unknown_server": Placement({new[0]: {"nowhere": (w, p)}}),
        "unknown_job": Placement({"ghost": {"s0": (1, 0)}}),
        "capacity": Placement(
            {j: {"s0": (int(v.workers[v.job_ids.index(j)]) + 5, 0)} for j in new[:1]}
        ),
    }
    if old:
        kinds["moved"] = Placement({old[0]: {"s1": (1, 0)}})
    # capacity: put the job's demands far above one server by repeating it through a fake count
    big = make_instance("big", 1, [job("A", "ctc", 3, 3)])
    assert {x.kind for x in check_placement(big, Placement({"A": {"s0": (3, 3)}})).violations} == {
        "capacity"
    }
    for kind, plan in kinds.items():
        rep = check_placement(inst, plan)
        assert not rep.valid and kind in {x.kind for x in rep.violations}, (kind, rep.violations)


@pytest.mark.parametrize("seed", range(12))
def test_milp_and_enumeration_agree_and_heuristics_stay_below(seed):
    """Two exact methods, the same optimum; every heuristic's validated reward <= it."""
    inst = tiny(seed)
    v = placement_view(inst)
    plan, value = exhaustive_placement(v)
    assert check_placement(inst, plan).objective == pytest.approx(value)
    res = solve(inst, "harmony-placement", "highs")
    assert res.status == Status.OPTIMAL and res.validation.valid
    assert res.objective == pytest.approx(value, rel=1e-6, abs=1e-9)
    assert res.bound >= value - 1e-6
    methods = [place_by_rule(v, r) for r in RULES] + [
        greedy_by_reward(v),
        greedy_by_reward(v, default_predictor().speed_fractions),
    ]
    for m in methods:
        rep = check_placement(inst, m)
        assert rep.valid and rep.objective <= value + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_place_all_optimum_places_every_job(seed):
    inst = tiny(seed)
    v = placement_view(inst)
    new = {v.job_ids[n] for n in np.flatnonzero(v.new)}
    res = solve(inst, "harmony-placement", "highs", options={"place_all": True})
    if res.status == Status.INFEASIBLE:  # then no rule can place them all either
        assert all(set(place_by_rule(v, r).jobs) != new for r in RULES)
        return
    assert res.status == Status.OPTIMAL and set(res.solution.jobs) == new
    free = solve(inst, "harmony-placement", "highs")
    assert res.objective <= free.objective + 1e-9  # placing everything can only cost reward


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    servers=st.integers(1, 4),
    new=st.integers(1, 4),
    old=st.integers(0, 3),
)
def test_rules_give_valid_placements(seed, servers, new, old):
    inst = random_instance(seed, n_servers=servers, n_new=new, n_old=old)
    v = placement_view(inst)
    for r in RULES:
        plan = place_by_rule(v, r)
        rep = check_placement(inst, plan)
        assert rep.valid, (r, rep.violations)
        if r == "standalone":  # no server holds two jobs' new tasks next to anything else
            tasks = v.fixed_workers + v.fixed_ps + sum(plan.to_arrays(v))
            placed_new = [v.job_ids.index(j) for j in plan.jobs]
            for n in placed_new:
                for s in np.flatnonzero(tasks[n]):
                    assert (tasks[:, s] > 0).sum() == 1


def _counts(k: int, servers: int) -> list[tuple[int, ...]]:
    """Every vector of ``servers`` counts that sum to k."""
    return [c for c in product(range(k + 1), repeat=servers) if sum(c) == k]


def _fits_by_hand(v, n: int, w: tuple, p: tuple, used: np.ndarray, allowed) -> bool:
    """Does (workers w, ps p per server) of job n fit next to ``used``? Server by server."""
    for s in range(v.n_servers):
        for r in range(len(v.resources)):
            need = w[s] * v.worker_demand[n, r] + p[s] * v.ps_demand[n, r]
            if need > v.capacity[s, r] - used[s, r] + 1e-9:
                return False
        if allowed is not None and (w[s] + p[s]) > 0 and not allowed[n, s]:
            return False
    return True


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    servers=st.integers(1, 4),
    old=st.integers(0, 3),
    forbid=st.integers(0, 2**12 - 1),
)
def test_job_candidates_are_every_placement_that_fits(seed, servers, old, forbid):
    """Every distribution of a job's workers and parameter servers that fits (and runs only
    where allowed), in the order workers' distribution first, each once: against a brute force
    over all count vectors."""
    from dataclasses import replace

    v = placement_view(random_instance(seed, n_servers=servers, n_new=2, n_old=old))
    mask = np.array(
        [[(forbid >> (n * 4 + s)) & 1 == 0 for s in range(v.n_servers)] for n in range(v.n_jobs)]
    )
    for allowed in (None, mask):
        view = v if allowed is None else replace(v, allowed=allowed)
        st_ = _State(view)
        for n in np.flatnonzero(view.new):
            got = [(tuple(w), tuple(p)) for w, p in job_candidates(view, int(n), st_)]
            W, P = int(view.workers[n]), int(view.parameter_servers[n])
            expected = {
                (w, p)
                for w in _counts(W, view.n_servers)
                for p in _counts(P, view.n_servers)
                if _fits_by_hand(view, int(n), w, p, st_.used, allowed)
            }
            assert len(got) == len(set(got)) and set(got) == expected
            order = [w for w, _ in got]  # workers' distributions in combinations order
            assert order == sorted(order, reverse=True)
        # past max_candidates: the rules' placements and one-server consolidations, each once
        for n in np.flatnonzero(view.new):
            few = job_candidates(view, int(n), st_, max_candidates=0)
            pairs = [(tuple(w), tuple(p)) for w, p in few]
            assert len(pairs) == len(set(pairs))
            assert all(_fits_by_hand(view, int(n), w, p, st_.used, allowed) for w, p in pairs)


def test_tetris_counterexample_is_shipped_and_exact():
    """The audit's smallest violation: one ResNeXt-110 job (2 workers, 1 PS) on two empty
    servers. Tetris's alignment score prefers the emptier server for the second task and
    spreads the job (reward (1 - kappa) b/e); on one server it trains at full speed (b/e)."""
    inst = load_instance(COUNTEREXAMPLE)
    v = placement_view(inst)
    n = 0
    b_over_e = v.standalone_speed[n] / v.epochs[n]
    tetris = check_placement(inst, place_by_rule(v, "tetris"))
    best = solve(inst, "harmony-placement", "highs")
    assert best.objective == pytest.approx(b_over_e)
    assert tetris.objective == pytest.approx(b_over_e * (1 - v.communication[n]))
    assert best.objective / tetris.objective == pytest.approx(
        1 / (1 - data.COMMUNICATION["resnext110"])
    )


def test_predictor_is_deterministic_and_accurate_enough():
    a, b = train_predictor(5, samples=300), train_predictor(5, samples=300)
    assert np.array_equal(a.theta, b.theta)
    assert not np.array_equal(a.theta, train_predictor(6, samples=300).theta)
    p = default_predictor()
    assert p.test_error < 0.15, (
        p.test_error
    )  # the paper trains to about 10% relative error (Sec. VI)
    inst = make_instance("unknown", 1, [job("X", "bert", 1, 0)])
    d = instance_to_dict(inst)
    d["metadata"]["placement"].update(
        interference={"bert": {"bert": 0.1}}, communication={"bert": 0.1}
    )
    d["metadata"]["placement"]["jobs"]["X"]["standalone_speed"] = 1.0
    view = placement_view(parse_instance(d))
    with pytest.raises(HetschedError, match="not trained on model 'bert'"):
        p.speed_fractions(view, np.ones((1, 1)))


def _bad(mutate) -> str:
    d = instance_to_dict(random_instance(1, n_servers=2, n_new=1, n_old=1))
    mutate(d)
    with pytest.raises(InputError) as err:
        placement_view(parse_instance(d, source="bad.json"))
    return str(err.value)


def test_input_errors_name_the_field():
    def no_meta(d):
        del d["metadata"]["placement"]

    def neg_cpu(d):
        d["metadata"]["placement"]["servers"]["s0"]["cpu"] = -1

    def unknown_model(d):
        d["jobs"][0]["model"]["name"] = "gpt-9"

    def miscount(d):
        old = next(j for j, e in d["metadata"]["placement"]["jobs"].items() if "placed" in e)
        d["metadata"]["placement"]["jobs"][old]["placed"] = {
            "s0": {"workers": 9, "parameter_servers": 0}
        }

    def no_epochs(d):
        d["jobs"][0].pop("epochs")

    assert "$.metadata.placement: missing" in _bad(no_meta)
    assert "bad.json: $.metadata.placement.servers.s0.cpu: must be >= 0 (got -1)" in _bad(neg_cpu)
    assert "$.jobs[0].model.name: no interference/communication data for model 'gpt-9'" in _bad(
        unknown_model
    )
    assert ".placed: places 9 workers" in _bad(miscount)
    assert "$.jobs[0].epochs: missing" in _bad(no_epochs)


def test_the_validator_recomputes_interference_and_capacity():
    """Moving a job's parameter servers onto a crowded server, or dropping one, is caught; the
    speeds are the speed model's, so a run that ignores interference is refused."""
    import dataclasses

    from hetsched.harmony.data import INTERVAL_SECONDS
    from hetsched.harmony.workload import harmony_workload
    from hetsched.sim.gang_validate import validate_gang

    inst = harmony_workload(2, n_jobs=12, n_servers=2)
    run = simulate_gang(inst, make_policy("harmony:bin-packing"), INTERVAL_SECONDS, 10.0)
    segs = run.segments
    assert validate_gang(inst, segs, 10.0, INTERVAL_SECONDS).valid
    k = next(i for i, s in enumerate(segs) if s.ps)
    dropped = segs[:k] + [segs[k]._replace(ps=segs[k].ps[1:])] + segs[k + 1 :]
    kinds = {v.kind for v in validate_gang(inst, dropped, 10.0, INTERVAL_SECONDS).violations}
    assert "interference" in kinds
    crowded = [s._replace(ps=("s0",) * len(s.ps) * 8) for s in segs]
    kinds = {v.kind for v in validate_gang(inst, crowded, 10.0, INTERVAL_SECONDS).violations}
    assert "interference" in kinds
    # the same run judged by a speed model without interference: its jobs finish too late
    meta = dict(inst.metadata)
    meta["placement"] = {
        **meta["placement"],
        "interference": {a: {b: 0.0 for b in data.MODELS} for a in data.MODELS},
    }
    calm = dataclasses.replace(inst, metadata=meta)
    kinds = {v.kind for v in validate_gang(calm, segs, 10.0, INTERVAL_SECONDS).violations}
    assert "progress" in kinds


PLACEMENT_DIR = ROOT / "instances" / "placement"
PLACEMENT_MANIFEST = json.loads((PLACEMENT_DIR / "manifest.json").read_text())


@pytest.mark.parametrize("name", sorted(PLACEMENT_MANIFEST["instances"]))
def test_shipped_placement_optima_are_reproduced(name):
    """Each shipped interval's recorded optimum (waiting allowed, and every job placed) is
    reproduced by the MILP, and by enumeration where the manifest says it proved it too."""
    from hetsched.instance.io import instance_hash

    entry = PLACEMENT_MANIFEST["instances"][name]
    inst = load_instance(PLACEMENT_DIR / name)
    assert instance_hash(inst) == entry["hash"]
    free = solve(inst, "harmony-placement", "highs")
    assert free.status == Status.OPTIMAL and free.objective == pytest.approx(
        entry["optimum"], rel=1e-9
    )
    every = solve(inst, "harmony-placement", "highs", options={"place_all": True})
    if entry["optimum_place_all"] is None:
        assert every.status == Status.INFEASIBLE
    else:
        assert every.objective == pytest.approx(entry["optimum_place_all"], rel=1e-9)
        assert every.objective <= free.objective + 1e-12
    if "enumeration" in entry["methods"]:
        _, value = exhaustive_placement(placement_view(inst), limit=300_000)
        assert value == pytest.approx(entry["optimum"], rel=1e-9)


@pytest.mark.parametrize("name", ["small-2s-c", "small-3s-a", "small-3s-b"])
def test_place_puts_every_method_at_or_below_the_certified_optimum(name):
    """place() (the library call behind ``hetsched place``): the MILP proves the manifest's optimum
    of eq. (1), and no heuristic's validated reward exceeds it."""
    from hetsched.harmony.methods import HEURISTICS
    from hetsched.harmony.place import place

    manifest = json.loads((ROOT / "instances" / "placement" / "manifest.json").read_text())
    entry = manifest["instances"][f"{name}.json"]
    report = place(load_instance(ROOT / "instances" / "placement" / f"{name}.json"))
    assert report.exact["status"] == "optimal"
    optimum = report.exact["objective"]
    assert [r["method"] for r in report.methods] == list(HEURISTICS)
    for r in report.methods:
        assert r["reward"] <= optimum * (1 + 1e-9)
        assert r["optimum_over_reward"] is None or r["optimum_over_reward"] >= 1 - 1e-9
    assert optimum == pytest.approx(entry["optimum"], rel=1e-6)  # waiting allowed, as eq. (1)


#: a random placement problem's shape, for :func:`_random_view`
VIEWS = dict(
    seed=st.integers(0, 10_000),
    servers=st.integers(1, 4),
    old=st.integers(0, 3),
    speeds=st.booleans(),
)


def _random_view(seed: int, servers: int, old: int, speeds: bool, separable: bool = False):
    """A random placement view with 3 new jobs; ``speeds``: per-server speeds; ``separable``: no
    interference and no communication cost (the gang simulator's setting)."""
    from dataclasses import replace

    v = placement_view(random_instance(seed, n_servers=servers, n_new=3, n_old=old))
    if separable:
        v = replace(v, interference=np.zeros_like(v.interference), communication=np.zeros(v.n_jobs))
    if speeds:
        rng = np.random.default_rng(seed)
        v = replace(v, server_speed=rng.uniform(0.5, 1.0, (v.n_jobs, v.n_servers)))
    return v


def _new_jobs_candidates(v):
    """For each new job n in order with a candidate next to the fixed jobs: (n, the tasks
    placed, the jobs counted so far, n included, the candidates' tasks per server)."""
    st_ = _State(v)
    base, counted = st_.tasks(), ~v.new
    for n in np.flatnonzero(v.new):
        counted[n] = True
        found = job_candidates(v, int(n), st_)
        if found:
            yield int(n), base, counted, np.array([w + p for w, p in found])


@settings(max_examples=30, deadline=None)
@given(**VIEWS)
def test_candidate_rewards_are_each_candidates_reward(seed, servers, old, speeds):
    """All candidates of a job at once give the reward :func:`speed_fractions` gives on each
    candidate's own task matrix (with and without per-server speeds); the greedy placement is
    the one the candidate-by-candidate loop picks."""
    v = _random_view(seed, servers, old, speeds)
    for n, base, counted, added in _new_jobs_candidates(v):
        got = candidate_rewards(v, base, n, added, counted)
        for c, extra in enumerate(added):
            tasks = base.copy()
            tasks[n] += extra
            expect = v.weight()[counted] @ speed_fractions(v, tasks)[counted]
            assert got[c] == pytest.approx(expect, rel=1e-12, abs=1e-12)
    one_by_one = greedy_by_reward(v, lambda view, tasks: speed_fractions(view, tasks))
    assert greedy_by_reward(v) == one_by_one


@settings(max_examples=60, deadline=None)
@given(**VIEWS)
def test_separable_rewards_are_the_general_ones_to_the_bit(seed, servers, old, speeds):
    """With no interference and no communication cost (the gang simulator's Harmony policy),
    candidate_rewards takes a short path: the same values, bit for bit, as the general one."""
    from hetsched.harmony import evaluate

    v = _random_view(seed, servers, old, speeds, separable=True)
    for n, base, counted, added in _new_jobs_candidates(v):
        u = (base > 0).astype(float)
        others = None if v.server_speed is None else evaluate.server_factor(v, base)
        for step in (1, 3, len(added)):
            args = (v, u, n, added, counted, others, step)
            short = evaluate._separable_rewards(*args, np.empty(len(added)))
            general = evaluate._general_rewards(*args, np.empty(len(added)))
            assert short.tobytes() == general.tobytes()
        assert candidate_rewards(v, base, n, added, counted).tobytes() == short.tobytes()
