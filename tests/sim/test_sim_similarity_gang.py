"""The model-similarity policy on the gang engine (issue 19, item 1): it ranks each job's GPU
types by its most similar other model's measured throughput (Algorithms 1-2), runs valid on the
workloads built from Gavel's table beside the other job-level policies, never preempts in its
``keep`` mode, and says which field is missing when a job names no row of Gavel's table."""

import dataclasses
import json

import pytest

from hetsched.core.errors import InputError
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_model import gang_jobs
from hetsched.sim.registry import make_policy
from hetsched.sim.run import compare
from hetsched.sim.workloads import gavel_poisson
from hetsched.similarity.reference import gavel_reference_db, row_features


def test_types_are_ranked_by_the_closest_other_models_throughput():
    inst = gavel_poisson(2, n_jobs=6, per_type=8)
    d = gang_jobs(inst)
    pol = make_policy("similarity")
    pol.prepare(inst, d)
    db = gavel_reference_db()
    for k, job in enumerate(inst.jobs):
        ref, _ = db.closest(row_features(job.model.name), exclude=job.model.name)
        assert ref.name != job.model.name
        est = [ref.throughput.get((d.types[r], int(d.gang[k])), 0.0) for r in pol.ranked[k]]
        assert est == sorted(est, reverse=True)
        assert all(d.throughput[k, r] > 0 for r in pol.ranked[k])


def test_an_idle_cluster_gives_each_job_its_first_ranked_type():
    inst = gavel_poisson(3, n_jobs=1, per_type=8)
    pol = make_policy("similarity")
    r = simulate_gang(inst, pol)
    d = gang_jobs(inst)
    (seg,) = r.segments
    assert {d.gpu_type[d.gpu_ids.index(g)] for g in seg.gpus} == {pol.ranked[0][0]}


def test_keep_never_preempts_and_change_remakes_decisions():
    inst = gavel_poisson(1, n_jobs=30, rate_per_hour=60.0, per_type=8)
    keep = simulate_gang(inst, make_policy("similarity:keep"))
    change = simulate_gang(inst, make_policy("similarity"))
    assert keep.validation.valid and change.validation.valid
    assert keep.preemptions == 0


def test_a_job_without_a_table_row_is_named():
    inst = gavel_poisson(1, n_jobs=3, per_type=8)
    jobs = list(inst.jobs)
    jobs[1] = dataclasses.replace(jobs[1], model=None)
    bad = dataclasses.replace(inst, jobs=tuple(jobs))
    with pytest.raises(InputError, match=r"\$\.jobs\[1\]\.model\.name"):
        simulate_gang(bad, make_policy("similarity"))
    with pytest.raises(InputError):
        make_policy("similarity:sometimes")


def test_compare_puts_it_beside_the_other_job_level_policies(tmp_path):
    inst = gavel_poisson(0, n_jobs=20, per_type=8)
    result = compare(inst, ["gavel", "similarity", "yarn-cs"], out=tmp_path)
    rows = result.rows
    assert json.loads((tmp_path / "compare.json").read_text()) == json.loads(
        json.dumps(result.to_dict())
    )  # compare() returns what it wrote: rows and bounds
    assert [r["policy"] for r in rows] == ["gavel", "similarity", "yarn-cs"]
    assert all(r["valid"] and r["ratio_to_bound"]["avg_jct"] >= 1.0 for r in rows)


@pytest.mark.parametrize("mode", ["", "pack", "truth"])
def test_a_job_no_gpu_type_can_hold_is_refused_at_once(mode):
    """The `gpu` variant runs a job on one type at its requested count: an 8-GPU job on 4 GPUs
    per type would wait for ever (it used to stop after 1,000 idle rounds); it is refused before
    time 0, naming the job's field."""
    inst = gavel_poisson(seed=1, n_jobs=200, rate_per_hour=40.0, per_type=4)
    big = next(k for k, j in enumerate(inst.jobs) if j.requested_workers == 8)
    policy = make_policy(f"similarity:{mode}" if mode else "similarity")
    with pytest.raises(InputError, match=rf"\$\.jobs\[{big}\]\.requested_workers.*no type has 8"):
        simulate_gang(inst, policy, 360.0, 10.0)
