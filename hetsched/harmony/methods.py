"""The one name table of Harmony's placement methods (ToN'22): the four rules of Sec. VII
(load balancing, bin packing, Tetris, standalone), the greedy by reward (eq. (1)) with the true
speed model or the learned interference predictor, and ``exact`` (the MILP
``harmony-placement``, which the caller runs through ``solve()``). ``hetsched place``,
``place-sim`` and the gang simulator's ``harmony:METHOD`` all read it."""

from __future__ import annotations

from typing import Callable

from hetsched.core.errors import InputError
from hetsched.harmony.heuristics import RULES, greedy_by_reward, place_by_rule
from hetsched.harmony.problem import Placement
from hetsched.harmony.view import PlacementView

#: the methods that place by a rule or a greedy, in the order they are reported
HEURISTICS = (*RULES, "greedy", "greedy-learned")
#: every method (``exact``: the optimum of eq. (1) by the MILP)
METHODS = (*HEURISTICS, "exact")
#: the methods that read each job's total work (Harmony's e_n): they need to know the future
CLAIRVOYANT = ("greedy", "greedy-learned", "exact")
#: the orders in which the waiting jobs are offered to a method: arrival, or largest reward
#: weight b_n / e_n first (eq. (1))
ORDERS = ("arrival", "reward")

Place = Callable[[PlacementView], Placement]


def check_method(name: str, source: str = "placement", path: str = "method") -> str:
    """``name`` if it is a placement method, else one :class:`InputError` listing them."""
    if name not in METHODS:
        raise InputError(source, path, f"one of {', '.join(METHODS)}, not {name!r}")
    return name


def heuristic(name: str, seed: int = 0) -> Place:
    """The placement heuristic ``name`` (one of :data:`HEURISTICS`) as a function of a view;
    ``greedy-learned`` uses the predictor trained with ``seed``."""
    if name in RULES:
        return lambda view: place_by_rule(view, name)
    if name == "greedy":
        return greedy_by_reward
    if name == "greedy-learned":
        from hetsched.harmony.predictor import default_predictor

        predictor = default_predictor(seed)
        return lambda view: greedy_by_reward(view, predictor.speed_fractions)
    check_method(name)
    raise InputError("placement", "method", f"{name!r} is not a heuristic (solve it exactly)")
