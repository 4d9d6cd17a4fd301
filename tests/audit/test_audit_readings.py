"""Verdicts per reading (issue 22 item 1): what the paper leaves open is a named reading of the
audit; each verdict of proofs/ is asserted here on its instance under every reading."""

import dataclasses
import math

import pytest
from support import INSTANCES

from hetsched.audit.claims import find_claim
from hetsched.audit.engine import apply_reading, parse_reading, reading_label
from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import instance_to_dict, load_instance, parse_instance

HADAR = find_claim("hadar-competitive")
PACKING = find_claim("packing")
THM2 = INSTANCES / "audit" / "hadar_thm2_counterexample.json"


def evaluate_under(claim, path, **reading):
    inst = apply_reading(
        claim, load_instance(path), parse_reading(claim, [f"{k}={v}" for k, v in reading.items()])
    )
    return claim.evaluate(inst, claim.profiles["ci"])


def test_readings_parse_with_defaults_and_refuse_unknowns():
    assert parse_reading(HADAR, None) == {"jct": "f-a+1", "progress": "sampled", "horizon": "cut"}
    r = parse_reading(HADAR, ["jct=f-a,horizon=run-on"])
    assert r == {"jct": "f-a", "progress": "sampled", "horizon": "run-on"}
    assert reading_label(HADAR, r) == "jct=f-a,horizon=run-on"
    with pytest.raises(InputError, match="has no reading 'speed'"):
        parse_reading(HADAR, ["speed=fast"])
    with pytest.raises(InputError, match="one of f-a\\+1, f-a, not 'f'"):
        parse_reading(HADAR, ["jct=f"])
    assert parse_reading(PACKING, ["metric=raw"]) == {"metric": "raw"}


def test_cli_reading_error_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["audit", "hadar-competitive", "--reading", "jct=nope", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--reading jct" in err[0]


# (jct, progress, horizon) -> (online utility, OPT) on hadar_thm2_counterexample.json; None:
# outside the reading's family (a job could finish in its arrival slot under f-a)
THM2_TABLE = {
    ("f-a+1", "bottleneck", "cut"): (0.0, 19 / 3),
    ("f-a+1", "bottleneck", "run-on"): (5.0, 19 / 3),
    ("f-a+1", "per-worker", "cut"): (5.0, 9.0),
    ("f-a+1", "per-worker", "run-on"): (55 / 6, 9.0),
    ("f-a", "bottleneck", "cut"): (6.0, 9.5),
    ("f-a", "bottleneck", "run-on"): (8.0, 9.5),
    ("f-a", "per-worker", "cut"): None,
    ("f-a", "per-worker", "run-on"): None,
}


@pytest.mark.parametrize("reading", sorted(THM2_TABLE))
def test_hadar_theorem_2_counterexample_under_each_reading(reading):
    """The instance refutes Theorem 2 only under the project's reading (JCT f - a + 1, progress at
    the slowest GPU, utility counted by T); under the others the ratio is far below 2 alpha."""
    jct, progress, horizon = reading
    ev = evaluate_under(HADAR, THM2, jct=jct, progress=progress, horizon=horizon)
    expected = THM2_TABLE[reading]
    if expected is None:
        assert ev.ratio is None and "arrival slot" in ev.details["skipped"]
        return
    online, opt = expected
    assert ev.details["online"] == pytest.approx(online) and ev.details["opt"] == pytest.approx(opt)
    violated = ev.ratio > ev.bound
    assert violated == (reading == ("f-a+1", "bottleneck", "cut"))
    if violated:
        assert ev.ratio == math.inf


def test_literal_jct_reading_in_the_view():
    """JCT = (f - a) L under jct=f-a; an instance where a job could finish in its arrival slot
    (JCT 0) is refused with the field named."""
    d = instance_to_dict(load_instance(THM2))
    d["metadata"]["hadar"]["jct"] = "f-a"
    v = hadar_view(parse_instance(d, source="x"))
    assert v.jct(0, int(v.arrival[0]) + 2) == 2 * v.slot_seconds
    d["metadata"]["hadar"]["progress"] = "per-worker"
    with pytest.raises(InputError, match=r"\$\.metadata\.hadar\.jct: under 'f-a' job J4"):
        hadar_view(parse_instance(d, source="x"))
    d["metadata"]["hadar"]["jct"] = "f"
    with pytest.raises(InputError, match=r"\$\.metadata\.hadar\.jct"):
        hadar_view(parse_instance(d, source="x"))


PACK = INSTANCES / "audit" / "packing_alg3_counterexample.json"


@pytest.mark.parametrize(
    "metric,ratio,greedy,optimum",
    [
        ("normalized", 1.209351153, 1.181284487, 1.428587756),
        ("raw", 1.163948157, 20.033224685, 23.317634951),
    ],
)
def test_algorithm_3_counterexample_under_each_metric(metric, ratio, greedy, optimum):
    """Normalized: the optimum packs Q0, Algorithm 3 Q1 (1.209x). Raw iterations/s: the optimum
    packs nothing (S0 alone, 23.3/s), Algorithm 3 still packs Q1 (20.0/s): 1.164x."""
    ev = evaluate_under(PACKING, PACK, metric=metric)
    assert ev.ratio == pytest.approx(ratio) and ev.bound == 1.0
    assert ev.details["greedy_value"] == pytest.approx(greedy)
    assert ev.details["optimal_value"] == pytest.approx(optimum)
    if metric == "raw":
        assert ev.details["optimal"] == []


@pytest.mark.parametrize("metric", ["normalized", "raw"])
def test_algorithm_3_smallest_counterexample_per_metric(metric):
    """One GPU, one scheduled and one queued job: Algorithm 3 packs a pair that lowers the value."""
    inst = load_instance(INSTANCES / "audit" / f"packing_alg3_smallest_{metric}.json")
    assert len(inst.jobs) == 2 and len(inst.gpus) == 1
    assert inst.metadata["packing"]["metric"] == metric
    ev = PACKING.evaluate(inst, PACKING.profiles["ci"])
    assert ev.ratio > 1.5 and ev.details["optimal"] == [] and len(ev.details["greedy"]) == 1


def test_packing_metric_is_checked_when_the_instance_is_made():
    inst = load_instance(PACK)
    with pytest.raises(InputError, match=r"\$\.metadata\.packing\.metric: one of normalized, raw"):
        dataclasses.replace(inst, metadata={"packing": {**inst.metadata["packing"], "metric": "x"}})


# the smallest counterexample the deep audit found for each refuted reading (proofs/hadar_theorem2.md)
SMALLEST = {
    "hadar_thm2_two_jobs.json": ({"jct": "f-a+1", "progress": "bottleneck"}, 4.0),
    "hadar_thm2_per_worker.json": ({"jct": "f-a+1", "progress": "per-worker"}, 23 / 6),
    "hadar_thm2_literal_jct.json": ({"jct": "f-a", "progress": "per-worker"}, 7.0),
}


@pytest.mark.parametrize("name", sorted(SMALLEST))
def test_each_refuted_reading_has_its_smallest_counterexample(name):
    """Under its reading (recorded in the instance) the online run finishes nothing by T while
    OPT is positive; run on past T, the same instance stays within 2 alpha."""
    reading, opt = SMALLEST[name]
    inst = load_instance(INSTANCES / "audit" / name)
    assert inst.metadata["audit"]["reading"] == {**reading, "horizon": "cut"}
    assert {k: inst.metadata["hadar"][k] for k in ("jct", "progress")} == reading
    ev = HADAR.evaluate(inst, HADAR.profiles["ci"])
    assert ev.ratio == math.inf and ev.details["online"] == 0.0
    assert ev.details["opt"] == pytest.approx(opt)
    run_on = evaluate_under(HADAR, INSTANCES / "audit" / name, horizon="run-on", **reading)
    assert run_on.ratio <= run_on.bound


def test_the_literal_jct_counterexample_holds_for_both_progress_readings():
    """Its jobs are 1-GPU gangs, where bottleneck and per-worker progress agree."""
    path = INSTANCES / "audit" / "hadar_thm2_literal_jct.json"
    ev = evaluate_under(HADAR, path, jct="f-a", progress="bottleneck", horizon="cut")
    assert ev.ratio == math.inf and ev.details["opt"] == pytest.approx(7.0)
