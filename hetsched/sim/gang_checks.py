"""The gang engine's check of a policy's round: every decision is legal (an active job, a full
gang of distinct GPUs it can run on, no GPU held twice unless by a pair that may be packed).
:func:`check_plan` checks a whole plan; :func:`check_moved` is the round's short path where no
GPU is shared, checking only the jobs that do not run on as they ran."""

from __future__ import annotations

from hetsched.core.errors import HetschedError
from hetsched.sim.gang_model import GangJobs
from hetsched.sim.gang_packing import PairRates


def check_plan(
    plan: dict[int, tuple[int, ...]],
    rows: dict[int, str],
    state,
    data: GangJobs,
    policy,
    pair_rates: PairRates,
    checked: dict[int, float],
) -> dict[tuple[int, int], tuple[float, float]]:
    """Every decision is legal: an active job, a full gang of distinct GPUs it can run on (or a
    resized run the workload allows), no GPU twice unless two jobs share the same gang as a
    pair that may be packed. A job that runs on as it ran (the same GPUs in the same order, the
    same row) passed the first checks when it started, so only its GPUs are counted again.
    Returns the packed pairs (a, b), a < b, and their pair rates; ``checked`` receives the
    rate of each run checked anew (the round's loop asks for it next)."""
    owner: dict[int, int] = {}  # GPU -> the last job placed there so far
    shared: set[int] = set()  # GPUs two jobs hold already
    pairs: dict[tuple[int, int], tuple[float, float]] = {}
    type_of, held, held_rows = data.type_of, state.held, state.held_rows
    for j, gpus in plan.items():
        was = held.get(j)
        if was is None or was != gpus or rows.get(j) != held_rows.get(j):
            gs, checked[j] = check_run(j, gpus, rows, state, data, policy)
        else:
            gs = was  # Python ints already
        low = None  # the lowest of j's GPUs that an earlier job of the plan holds, and that job
        for g in gs:
            k = owner.get(g)
            if k is not None and (low is None or g < low):
                low, mate = g, k
            owner[g] = j
        if low is not None:
            k, mine = mate, set(gs)
            a, b = (j, k) if j < k else (k, j)
            if not (
                state.convention == "hetsched"
                and set(plan[k]) == mine
                and len({type_of[g] for g in gs}) == 1
                and not shared & mine
                and min(
                    rates := pair_rates(a, b, type_of[gs[0]], len(gs), rows.get(a), rows.get(b))
                )
                > 0
            ):
                raise HetschedError(
                    f"policy {policy.name} gave a GPU to two jobs at t={state.now} "
                    "(only a pair that may be packed can share a gang, under the hetsched convention)"
                )
            shared |= mine
            pairs[a, b] = rates
    pair_rates.next_round()
    return pairs


def check_run(
    j: int, gpus, rows: dict[int, str], state, data: GangJobs, policy
) -> tuple[list[int], float]:
    """Job j is active and may run on these GPUs (distinct, its gang or a resized run the
    workload allows, a positive rate); returns them as Python ints, and the rate."""
    if not (0 <= j < data.n_jobs and state.arrived[j] and not state.done[j]):
        raise HetschedError(
            f"policy {policy.name} placed job index {j}, which is not active at t={state.now}"
        )
    gs = [int(g) for g in gpus]
    resized = j in rows or len(gs) != data.gang_sizes[j]
    if len(set(gs)) != len(gs) or (resized and data.resize == "none"):
        raise HetschedError(
            f"policy {policy.name} gave {data.job_ids[j]} {len(set(gs))} GPUs, its gang is {data.gang[j]}"
        )
    if (
        not gs
        or min(gs) < 0
        or max(gs) >= data.n_gpus
        or (rate := data.run_rate(j, gs, rows.get(j))) <= 0
    ):
        raise HetschedError(
            f"policy {policy.name} put {data.job_ids[j]} on GPUs it cannot run on"
            + (f" as {len(gs)} GPUs of row {rows.get(j) or data.models[j]!r}" if resized else "")
        )
    return gs, rate


def check_moved(
    plan: dict[int, tuple[int, ...]],
    state,
    data: GangJobs,
    policy,
    pair_rates: PairRates,
    checked: dict[int, float],
) -> bool:
    """:func:`check_plan` for a plan of the job's own rows (no resized run) in a round with no
    GPU held twice: checks each job that does not run on as it ran, and returns True; returns
    False, having checked nothing, where some GPU is in two gangs (the caller then runs
    :func:`check_plan`, which decides whether they are a pair that may be packed)."""
    held = state.held
    gangs = plan.values()
    if len(set().union(*gangs)) != sum(map(len, gangs)):  # a GPU in two gangs
        return False
    for j, gpus in plan.items():
        was = held.get(j)
        if was is None or was != gpus:
            _, checked[j] = check_run(j, gpus, {}, state, data, policy)
    pair_rates.next_round()
    return True
