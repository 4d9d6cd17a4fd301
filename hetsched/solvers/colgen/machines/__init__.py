"""Branch-and-price over machine schedules for P|Q|R || sum w_j C_j, the special case of
Hare_Sched (HPDC'22, (4)-(8)) where every job is one round of one task and all jobs arrive
together -- the formulation of van den Akker, Hoogeveen & van de Velde (Oper. Res. 47, 1999),
with the stabilization, phase-one (Farkas) pricing and completion-time branching of
Kowalczyk & Leus (INFORMS J. Comput. 30, 2018).

* :mod:`.data`: the instance as jobs x GPU classes in integer ticks, and whether it applies;
* :mod:`.pricing`: the pricing DP over one GPU's time (Smith's order, numba);
* :mod:`.master`: the restricted master LP on HiGHS;
* :mod:`.search`: column generation at a node, branching, and the best-first search;
* :mod:`.schedules`: list scheduling and the interval colouring that turns a node's LP into a schedule.
"""

from hetsched.solvers.colgen.machines.data import (
    MachineProblem,
    machine_problem,
    unsupported_reason,
)
from hetsched.solvers.colgen.machines.search import MachineSolution, solve_machine_schedules

__all__ = [
    "MachineProblem",
    "MachineSolution",
    "machine_problem",
    "solve_machine_schedules",
    "unsupported_reason",
]
