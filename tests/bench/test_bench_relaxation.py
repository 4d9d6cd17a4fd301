"""hetsched/bench/relaxation.py: the subset relaxation on the audit's large-profile instances."""

import json

import numpy as np

from hetsched.audit.hare import PROFILES, sample
from hetsched.bench.relaxation import run_relaxation_bench


def test_the_bench_solves_the_audits_instances_and_resumes_from_its_log(tmp_path, capsys):
    """Quick: the first 2 instances the audit's sampler draws for seed 0, each solved once; a
    rerun reads them from the log. The rows name the instances the audit would draw."""
    out = tmp_path / "audit-large.jsonl"
    assert run_relaxation_bench(None, time_limit=5, out=out, quick=True) == 0
    first = out.read_text()
    rows = [json.loads(line) for line in first.splitlines()]
    rng = np.random.default_rng(0)
    drawn = [sample(rng, PROFILES["large"]) for _ in range(2)]
    assert [r["instance"] for r in rows] == [inst.name for inst in drawn]
    assert [r["tasks"] for r in rows] == [sum(j.n_tasks for j in inst.jobs) for inst in drawn]
    for r in rows:
        assert 20 <= r["tasks"] <= 40 and r["model"] == "hare-sched-rl-subsets"
        assert r["status"] in ("optimal", "time_limit") and r["bound"] is not None
        if r["status"] == "optimal":
            assert (
                r["objective"] is not None
                and abs(r["objective"] - r["bound"]) <= 1e-6 * r["objective"]
            )
    assert "proven optimal on" in capsys.readouterr().out
    assert run_relaxation_bench(None, time_limit=5, out=out, quick=True) == 0
    assert out.read_text() == first  # nothing solved twice
