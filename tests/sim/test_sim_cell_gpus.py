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
