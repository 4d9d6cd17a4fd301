"""Whether a job fits on the empty cluster (hetsched.harmony.fits) against enumerating every
assignment of its tasks to servers, and the gang simulator's refusal of a job that never fits."""

import itertools

import numpy as np
import pytest

from hetsched.core.errors import InputError
from hetsched.harmony.fits import fits_on_empty_cluster
from hetsched.harmony.workload import harmony_workload
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy


def _fits_by_enumeration(items: list[np.ndarray], capacity: np.ndarray) -> bool:
    for where in itertools.product(range(len(capacity)), repeat=len(items)):
        used = np.zeros_like(capacity)
        for d, h in zip(items, where):
            used[h] += d
        if np.all(used <= capacity + 1e-9):
            return True
    return False


@pytest.mark.parametrize("seed", range(300))
def test_the_search_agrees_with_enumerating_every_assignment(seed):
    rng = np.random.default_rng(seed)
    n_servers, k = int(rng.integers(1, 4)), 3
    capacity = rng.integers(0, 6, size=(n_servers, k)).astype(float)
    worker = rng.integers(0, 3, size=k).astype(float)
    ps = rng.integers(0, 3, size=k).astype(float)
    w, p = int(rng.integers(0, 4)), int(rng.integers(0, 3))
    got = fits_on_empty_cluster(worker, w, ps, p, capacity)
    assert got == _fits_by_enumeration([worker] * w + [ps] * p, capacity)


def test_a_search_past_its_budget_says_unknown_not_no():
    # 12 unit tasks on 11 servers of room 1 each: no, but only after trying many placements
    capacity = np.ones((11, 1)) + np.arange(11).reshape(-1, 1) * 1e-3  # all distinct: no pruning
    assert fits_on_empty_cluster(np.ones(1), 12, np.ones(1), 0, capacity, budget=50) is None
    assert fits_on_empty_cluster(np.ones(1), 11, np.ones(1), 0, capacity, budget=50) is True


def test_the_gang_simulator_refuses_a_job_that_fits_on_no_server_even_empty(tmp_path, capsys):
    """Harmony's workload on 2 servers holds a job of 3 workers and 3 parameter servers that
    no 2 empty servers can host: refused at the start with its JSON path, not after 1,000 idle
    rounds; from an instance file, one line and exit 2."""
    from hetsched.cli import main
    from hetsched.instance.serialize import dump_instance

    inst = harmony_workload(0, n_servers=2)
    with pytest.raises(InputError, match=r"\$\.metadata\.placement\.jobs\.J9: its 3 worker"):
        simulate_gang(inst, make_policy("harmony-greedy"))
    path = tmp_path / "two-servers.json"
    dump_instance(inst, path)
    assert main(["simulate", str(path), "--policy", "harmony-greedy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and "jobs.J9: its 3 worker(s) and 3 parameter server(s) fit on no" in err[0]
    )


def test_a_workload_whose_jobs_all_fit_somewhere_runs_to_the_end():
    inst = harmony_workload(2, n_servers=2)  # every job fits on two empty servers
    run = simulate_gang(inst, make_policy("harmony-greedy"))
    assert len(run.completion) == len(inst.jobs)
