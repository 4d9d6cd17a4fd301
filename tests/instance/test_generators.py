import json

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


def test_the_ladder_family_is_the_benchmark_ladder():
    from hetsched.instance.generators import generate
    from hetsched.instance.io import instance_to_dict

    a = generate("ladder", seed=0, n_tasks=24, n_gpus=4)
    assert instance_to_dict(a) == instance_to_dict(ladder(24, 4, seed=0))
    assert a.n_tasks == 24 and len(a.gpus) == 4


def test_hare_random_has_the_asked_shape_and_the_same_seed_gives_the_same_bytes():
    from hetsched.instance.generators import generate
    from hetsched.instance.io import instance_to_dict

    for seed in range(5):
        inst = generate("hare-random", seed=seed, n_jobs=7, n_gpus=5, rounds=4, tasks_per_round=3)
        assert len(inst.jobs) == 7 and len(inst.gpus) == 5
        assert all(1 <= j.rounds <= 4 and 1 <= j.tasks_per_round <= 3 for j in inst.jobs)
        assert len({g.type for g in inst.gpus}) == 3
        again = generate("hare-random", seed=seed, n_jobs=7, n_gpus=5, rounds=4, tasks_per_round=3)
        assert json.dumps(instance_to_dict(inst)) == json.dumps(instance_to_dict(again))


def test_generate_names_a_flag_the_family_does_not_take(capsys):
    from hetsched.cli import main

    assert main(["generate", "small", "--seed", "0", "--tasks-per-round", "2"]) == 2
    assert "family 'small' takes no --tasks-per-round" in capsys.readouterr().err
    assert main(["generate", "ladder", "--seed", "0", "--tasks", "22"]) == 2
    assert "--tasks: must be a multiple of 4" in capsys.readouterr().err
