"""``place()``: every placement method on one interval of Harmony's problem (ToN'22), each
placement checked by the independent validator and put beside the exact optimum of eq. (1)
(the MILP ``harmony-placement``). ``hetsched place`` prints what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from hetsched.exact.solve import solve
from hetsched.harmony.methods import HEURISTICS, heuristic
from hetsched.harmony.problem import check_placement, placement_view
from hetsched.instance.model import Instance
from hetsched.solvers import Status


@dataclass(frozen=True)
class PlaceReport:
    """The exact result (status, objective, bound, gap, placement) and one row per method
    (reward, the new jobs left waiting, placement, optimum / reward)."""

    instance: str
    new_jobs: int
    earlier_jobs: int
    servers: int
    exact: dict[str, Any]
    methods: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"instance": self.instance, "exact": self.exact, "methods": self.methods}


def place(
    instance: Instance,
    methods: Sequence[str] = HEURISTICS,
    time_limit: float = 60.0,
    place_all: bool = False,
) -> PlaceReport:
    """Run each heuristic of ``methods`` and the MILP (``place_all``: every new job must be
    placed) on ``instance``; a placement the validator refuses is a bug, never a result."""
    view = placement_view(instance)
    exact = solve(
        instance,
        "harmony-placement",
        "highs",
        time_limit=time_limit,
        options={"place_all": True} if place_all else None,
    )
    found = exact.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT)
    optimum = exact.objective if found else None
    rows = []
    for name in methods:
        plan = heuristic(name)(view)
        rep = check_placement(instance, plan)
        if not rep.valid:  # a bug in the method (exit 3), never a result
            raise AssertionError(f"{name}: invalid placement: {rep.violations[0].message}")
        waiting = [j for k, j in enumerate(view.job_ids) if view.new[k] and j not in plan.jobs]
        ratio = optimum / rep.objective if optimum is not None and rep.objective > 0 else None
        rows.append(
            {
                "method": name,
                "reward": rep.objective,
                "waiting": waiting,
                "placement": plan.to_dict()["placement"],
                "optimum_over_reward": ratio,
            }
        )
    return PlaceReport(
        instance.name,
        int(view.new.sum()),
        int((~view.new).sum()),
        view.n_servers,
        {
            "status": exact.status.value,
            "objective": exact.objective,
            "bound": exact.bound,
            "gap": exact.gap,
            "place_all": place_all,
            "placement": exact.solution.to_dict()["placement"] if exact.solution else None,
        },
        rows,
    )
