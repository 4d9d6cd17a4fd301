"""The model-similarity policy's pieces (AppSci'24): cosine similarity (Algorithm 1), one round of
Algorithm 2 in its three variants, and the exact round it never beats."""

import numpy as np
import pytest

from hetsched.core.errors import InputError
from hetsched.exact.solve import solve
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server
from hetsched.similarity import (
    VARIANTS,
    check_round,
    cosine_similarity,
    gavel_reference_db,
    greedy_round,
    round_view,
)
from hetsched.solvers import Status

TYPES = ("k80", "p100", "v100")


def round_instance(rng, variant, unseen=True):
    db = gavel_reference_db()
    names = [r.name for r in db.jobs]
    gpus = tuple(
        Gpu(f"g{i}", TYPES[int(t)], "s")
        for i, t in enumerate(rng.integers(3, size=int(rng.integers(2, 7))))
    )
    jobs = tuple(
        Job(
            f"J{k}",
            float(k),
            1.0,
            1,
            1,
            {t: 1.0 for t in TYPES},
            {t: 0.0 for t in TYPES},
            requested_workers=int(rng.choice([1, 1, 2, 4])),
            model=ModelInfo(name=names[int(rng.integers(len(names)))]),
        )
        for k in range(int(rng.integers(2, 6)))
    )
    return Instance(
        "round",
        Cluster({t: GpuType(t) for t in TYPES}, (Server("s", gpus),)),
        jobs,
        metadata={"similarity": {"variant": variant, "unseen": unseen}},
    )


def test_cosine_similarity_basics():
    assert cosine_similarity([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)  # scale-invariant
    assert cosine_similarity([1, 0], [0, 1]) == pytest.approx(0.0)
    with pytest.raises(InputError):
        cosine_similarity([0, 0], [1, 1])


def test_algorithm_1_finds_the_job_itself_when_it_is_in_the_database():
    db = gavel_reference_db()
    for ref in db.jobs[:10]:
        found, sim = db.closest(ref.features)
        assert sim == pytest.approx(1.0) and found.features == ref.features
        other, s2 = db.closest(ref.features, exclude=ref.name)
        assert other.name != ref.name and s2 <= 1 + 1e-12


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", range(6))
def test_algorithm_2_is_valid_and_never_beats_the_exact_round(variant, seed):
    inst = round_instance(np.random.default_rng([seed, 5]), variant)
    view = round_view(inst)
    for opts in view.options:  # line 6: ranked by the reference's throughput
        assert [o.estimate for o in opts] == sorted((o.estimate for o in opts), reverse=True)
    greedy = check_round(inst, greedy_round(view))
    exact = solve(inst, "similarity-allocation", "highs")
    assert greedy.valid and exact.status == Status.OPTIMAL and exact.validation.valid
    assert greedy.objective <= exact.objective + 1e-9
    assert exact.objective <= len(inst.jobs) + 1e-9  # each job is worth at most 1


def test_variant_gpu_keeps_the_requested_count():
    inst = round_instance(np.random.default_rng(3), "gpu")
    view = round_view(inst)
    want = {j.id: j.requested_workers for j in inst.jobs}
    assert all(o.gpus == want[jid] for jid, opts in zip(view.job_ids, view.options) for o in opts)


def test_capacity_violation_is_caught():
    inst = round_instance(np.random.default_rng(1), "gpu_ngpu")
    view = round_view(inst)
    greedy = greedy_round(view)
    if not greedy:
        pytest.skip("nothing scheduled")
    jid, opt = next(iter(greedy.items()))
    over = {f"{jid}-{k}": opt for k in range(10)}  # unknown jobs and far too many GPUs
    report = check_round(inst, {**greedy, **over})
    assert not report.valid


def test_bad_variant_is_named_when_the_instance_is_made():
    with pytest.raises(InputError, match=r"\$\.metadata\.similarity\.variant: one of gpu, "):
        round_instance(np.random.default_rng(0), "bogus")
