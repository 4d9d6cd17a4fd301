from hetsched.instance.generators import ladder, small
from hetsched.instance.io import instance_hash


def test_same_seed_same_instance_and_different_seeds_differ():
    assert instance_hash(small(5)) == instance_hash(small(5))
    assert instance_hash(ladder(16, 4, seed=3)) == instance_hash(ladder(16, 4, seed=3))
    assert len({instance_hash(small(s)) for s in range(10)}) == 10


def test_small_family_respects_its_ranges():
    for s in range(40):
        inst = small(s)
        types = {g.type for g in inst.gpus}
        assert 2 <= len(inst.gpus) <= 5 and 2 <= len(types) <= 3
        assert 2 <= len(inst.jobs) <= 6 and inst.n_tasks <= 16
        for j in inst.jobs:
            assert 1 <= j.rounds <= 3 and 1 <= j.tasks_per_round <= 4
            assert all(
                float(t).is_integer()
                for t in [*j.train_time.values(), *j.sync_time.values(), j.arrival]
            )


def test_ladder_has_the_requested_size():
    inst = ladder(48, 4)
    assert inst.n_tasks == 48 and len(inst.gpus) == 4 and len({g.type for g in inst.gpus}) == 3
