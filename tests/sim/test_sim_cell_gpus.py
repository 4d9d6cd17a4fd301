"""The compiled placement of per-cell gangs (hetsched.sim.gang_policies.cell_gpus) against the
rule it implements, written out GPU by GPU: each job in increasing index takes, in each of its
cells, its own GPUs of last round, then GPUs nobody held, then another job's, in index order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.sim.gang_policies.cell_gpus import CellGpus


def _by_rule(server, gpu_type, chosen, held):
    cells: dict[tuple[int, int], list[int]] = {}
    for g in range(len(server)):
        cells.setdefault((int(server[g]), int(gpu_type[g])), []).append(g)
    free = set(range(len(server)))
    others = {g for gs in held.values() for g in gs}
    plan = {}
    for j, rows in sorted(chosen.items()):
        mine = set(held.get(j, ()))
        gpus: list[int] = []
        for h, r, n in rows:
            pool = [g for g in cells.get((h, r), ()) if g in free]
            pool.sort(key=lambda g: (g not in mine, g in others, g))
            gpus += pool[:n]
        plan[j] = tuple(gpus)
        free -= set(gpus)
    return plan


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_compiled_placement_is_the_rule(seed):
    rng = np.random.default_rng(seed)
    H, R = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    n_gpus = int(rng.integers(1, 16))
    server, gpu_type = rng.integers(0, H, n_gpus), rng.integers(0, R, n_gpus)
    jobs = rng.permutation(8)[: int(rng.integers(1, 6))]
    left = {
        (h, r): int(((server == h) & (gpu_type == r)).sum()) for h in range(H) for r in range(R)
    }
    chosen = {}
    for j in jobs.tolist():  # gangs that fit the cells, as a search leaves them
        rows = []
        for cell in rng.permutation(len(left))[: int(rng.integers(1, 3))].tolist():
            h, r = divmod(cell, R)
            n = int(rng.integers(0, left[h, r] + 1))
            if n:
                rows.append((h, r, n))
                left[h, r] -= n
        if rows:
            chosen[j] = rows
    owners = rng.integers(-1, 10, n_gpus)  # last round's holders: some chosen, some not
    held: dict[int, tuple[int, ...]] = {}
    for g, o in enumerate(owners.tolist()):
        if o >= 0:
            held[o] = held.get(o, ()) + (g,)
    order = list(chosen)  # the order a search takes them in: the queue's, not the index's
    count = np.array([len(chosen[j]) for j in order], dtype=np.int64)
    rows = np.array([t for j in order for t in chosen[j]], dtype=np.int64).reshape(-1, 3)
    cells = CellGpus.of(server, gpu_type, H, R)
    got = cells.place(np.array(order, dtype=np.int64), count, rows, held)
    want = _by_rule(server, gpu_type, chosen, held)
    assert got == want and list(got) == list(want)  # the same GPUs, jobs by index


def test_relabelling_identical_machines_keeps_jobs_where_they_ran():
    """Three identical 2-GPU machines (class 0) and one other (class 1): gangs decided on the
    machines as labels are moved, within a class, to the machines their jobs held; the labels
    stay a one-to-one map within each class, and without ``classes`` nothing moves."""
    from hetsched.sim.gang_policies.cell_gpus import relabel

    server = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    gpu_type = np.zeros(8, dtype=np.int64)
    cells = CellGpus.of(server, gpu_type, 4, 1)
    classes = np.array([0, 0, 0, 1])
    held = {7: (4, 5), 9: (2,), 4: (6, 7)}  # job 7 ran on machine 2, job 9 on 1, job 4 on 3
    jobs, count = np.array([7, 9, 4]), np.array([1, 1, 1])
    triples = np.array([[0, 0, 2], [1, 0, 1], [3, 0, 2]])  # as decided: machines 0, 1, 3
    plan = cells.place(jobs, count, triples, held, classes)
    assert plan == {7: (4, 5), 9: (2,), 4: (6, 7)}  # every job where it ran
    assert cells.place(jobs, count, triples, held) == {7: (0, 1), 9: (2,), 4: (6, 7)}
    owner = np.full(8, -1, dtype=np.int64)
    for j, gs in held.items():
        owner[list(gs)] = j
    moved = relabel(jobs, count, triples, owner, cells.start, cells.gpus, 1, classes)
    assert moved[:, 0].tolist() == [2, 1, 3] and (moved[:, 1:] == triples[:, 1:]).all()
    # job 4 held machine 3 (class 1); a gang of it on machine 0 stays in class 0, on a machine
    # no job held (machine 0: job 7 held none there, machine 1 is job 9's, machine 2 job 7's)
    across = relabel(
        np.array([4]),
        np.array([1]),
        np.array([[0, 0, 2]]),
        owner,
        cells.start,
        cells.gpus,
        1,
        classes,
    )
    assert across[0, 0] == 0
