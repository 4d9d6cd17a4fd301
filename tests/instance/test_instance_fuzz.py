"""Hostile instance files: random mutations of valid instances (types, signs, magnitudes up to
1e308, NaN, missing and duplicate fields, huge counts) are either loaded or refused with one
InputError naming the JSON path -- never another exception (issue 12, item 6; the loader half)."""

from __future__ import annotations

import copy
import json
import math

from hypothesis import given, settings
from support import BASES, mutated

from hetsched.core.errors import InputError
from hetsched.core.jsonio import parse_json_text
from hetsched.instance.io import instance_to_dict, parse_instance


@settings(max_examples=300)
@given(mutated())
def test_a_mutated_instance_loads_or_is_refused_with_a_path(doc):
    text = json.dumps(
        doc
    )  # NaN and Infinity become the non-standard tokens a hostile file may hold
    try:
        inst = parse_instance(parse_json_text(text, "fuzz.json"), source="fuzz.json")
    except InputError as exc:
        assert str(exc).startswith("fuzz.json") and "\n" not in str(exc)
        return
    # what loads is sane: finite times within the limits, and it round-trips
    for j in inst.jobs:
        assert all(
            math.isfinite(t) and 0 <= t <= 1e15
            for t in (*j.train_time.values(), *j.sync_time.values(), j.arrival)
        )
    assert parse_instance(instance_to_dict(inst), source="again").jobs == inst.jobs


def test_a_huge_instance_is_refused_before_any_model_is_built(tmp_path, capsys):
    """Within the loader's limits but far past what a model can hold: every exact method says why,
    at once (exit 2), instead of building for minutes past the time limit."""
    import time

    from hetsched.cli import EXIT_INPUT, main

    doc = copy.deepcopy(BASES[0])
    doc["jobs"][0]["rounds"] = 1_000_000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(doc))
    for solver in ("cpsat", "highs", "bp", "colgen"):
        t0 = time.process_time()
        assert main(["solve", str(path), "--solver", solver, "--time-limit", "5"]) == EXIT_INPUT
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("limit" in err or "rounds" in err), err
        assert time.process_time() - t0 < 30
        assert "use --solver" not in err  # never advice to use a method that refuses it too
    # the default, Hare_Sched's anytime portfolio, answers it: list schedules and the bounds
    # need no model (issue 44: every instance gets a validated schedule and a bound). On a
    # fifth of the rounds: at 4 million tasks writing the schedule as JSON alone takes ~40 s
    doc["jobs"][0]["rounds"] = 200_000
    path.write_text(json.dumps(doc))
    assert main(["solve", str(path), "--time-limit", "5", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (
        d["solver"] == "portfolio" and d["validation"]["valid"] and 0 < d["bound"] <= d["objective"]
    )
