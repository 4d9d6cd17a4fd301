"""Hadar's view, price function (5)-(8) and the independent decision validator, on Fig. 1."""

import math

import pytest

from hetsched.errors import InputError
from hetsched.hadar.price import durations, price_function
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import load_instance

from conftest import INSTANCES

FIG1 = INSTANCES / "hadar" / "hadar_fig1.json"


def test_fig1_view():
    v = hadar_view(load_instance(FIG1))
    assert v.types == ("k80", "p100", "v100") and v.capacity.tolist() == [[1, 3, 2]]
    assert v.workers.tolist() == [3, 2, 2] and v.work.tolist() == [80, 30, 50]
    assert v.rate(0, [2, 0], 3) == 30  # J1 on V100s and the K80: min(40, 30) epochs per round
    # horizon: 1 + the slots each job needs alone on its slowest type: 80/20 + 30/5 + 50/2
    assert v.horizon == 1 + 4 + 6 + 25


def test_price_function_by_hand():
    v = hadar_view(load_instance(FIG1))
    t_min, t_max = durations(v)
    assert t_min.tolist() == [2.0, 2.0, 2.5] and t_max.tolist() == [4.0, 6.0, 25.0]
    p = price_function(v)
    assert p.u_max == pytest.approx(max(40 / 3, 15 / 2, 20 / 2))  # U_j(t_min) / W_j, U = E N / JCT
    assert p.u_min == pytest.approx(min(80 / 36 / 12, 30 / 36 / 12, 50 / 36 / 50) / 4)  # JCT at the horizon: 36 s
    assert p.price(0, 3) == pytest.approx(p.u_min) and p.price(3, 3) == pytest.approx(p.u_max)
    assert p.price(1, 3) == pytest.approx(p.u_min * (p.u_max / p.u_min) ** (1 / 3))
    assert p.alpha == pytest.approx(math.log(p.u_max / p.u_min))


def test_validator_recomputes_finish_and_utility():
    """Slot 1-3: J1 on 2 V100 + K80 (30/round, done after 3), J2 on 2 P100 (15/round, done after 2);
    J3 on 2 V100 from slot 4 (10/round, done after 5 rounds, slot 8)."""
    inst = load_instance(FIG1)
    d = {"J1": {t: {("node0", "v100"): 2, ("node0", "k80"): 1} for t in (1, 2, 3)},
         "J2": {t: {("node0", "p100"): 2} for t in (1, 2)},
         "J3": {t: {("node0", "v100"): 2} for t in range(4, 9)}}
    r = validate_decisions(inst, d, require_all=True)
    assert r.valid, r.violations
    assert r.finish == {"J1": 3, "J2": 2, "J3": 8} and r.jct == {"J1": 3.0, "J2": 2.0, "J3": 8.0}
    assert r.utility == pytest.approx(80 / 3 + 30 / 2 + 50 / 8)


def test_validator_lists_every_violation():
    inst = load_instance(FIG1)
    d = {"J1": {1: {("node0", "v100"): 2, ("node0", "k80"): 1}},  # runs once: not finished
         "J2": {1: {("node0", "v100"): 2}},  # V100s taken twice in slot 1
         "J3": {2: {("node0", "p100"): 1}}}  # 1 GPU: not a gang of 2
    kinds = sorted(x.kind for x in validate_decisions(inst, d, require_all=True).violations)
    assert kinds == ["capacity", "gang", "progress", "progress", "progress"]  # no job finishes


def test_missing_hadar_fields_are_input_errors():
    import dataclasses

    inst = load_instance(FIG1)
    bad = dataclasses.replace(inst, jobs=(dataclasses.replace(inst.jobs[0], epochs=None),) + inst.jobs[1:])
    with pytest.raises(InputError, match=r"\$.jobs\[0\]"):
        hadar_view(bad)
