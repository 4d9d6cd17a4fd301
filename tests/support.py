"""What several test modules share: the shipped instances and their manifest, and the hostile
instance documents of the fuzz tests. (``conftest.py`` keeps pytest's fixtures and the Hypothesis
profiles; tests/ is on ``sys.path`` through it, so ``from support import ...`` works from every
subdirectory.)"""

from __future__ import annotations

import copy
import json
import signal
from pathlib import Path

from hypothesis import strategies as st

from hetsched.core.resources import shipped

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"
MANIFEST = json.loads((INSTANCES / "manifest.json").read_text())["instances"]
CERTIFIED = sorted(k for k, e in MANIFEST.items() if e["optimum"] is not None)


def instance_path(name: str) -> Path:
    for sub in ("small", "paper", "audit", "allocation"):
        p = INSTANCES / sub / name
        if p.exists():
            return p
    raise FileNotFoundError(name)


def hadar_tiny_variant(seed: int):
    """instances/hadar/hadar_tiny.json with random epochs and throughputs (small enough to enumerate)."""
    import dataclasses

    import numpy as np

    from hetsched.instance.io import load_instance

    rng = np.random.default_rng(seed)
    base = load_instance(INSTANCES / "hadar" / "hadar_tiny.json")
    jobs = tuple(
        dataclasses.replace(
            j,
            epochs=float(rng.integers(4, 21)),
            throughput={t: float(rng.integers(2, 11)) for t in ("k80", "v100")},
        )
        for j in base.jobs
    )
    return dataclasses.replace(base, jobs=jobs)


# hostile instance files (issue 12, item 6): valid documents with random values put in
# random places, for the loader's and the CLI's fuzz tests
BASES = [
    json.loads(shipped("instances", "paper", name).read_text())
    for name in ("hare_fig9.json", "hadar_fig1.json")
]
HOSTILE = st.one_of(
    st.sampled_from(
        [
            0,
            -1,
            -1e-300,
            1e15,
            1e16,
            1e308,
            -1e308,
            2**63,
            10**9,
            10**7 + 1,
            0.5,
            "",
            "x",
            None,
            True,
            [],
            {},
            [1, 2],
            {"a": 1},
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.text(max_size=5),
)


def json_paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from json_paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from json_paths(v, prefix + (i,))


@st.composite
def mutated(draw):
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in json_paths(doc) if p]
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "duplicate"]))
        if action == "replace":
            parent[path[-1]] = draw(HOSTILE)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
        else:
            parent[f"{path[-1]}_copy"] = copy.deepcopy(parent[path[-1]])
    return doc


#: (maximize, optimum, x, y) of :func:`hand_lp` both ways
HAND_OPTIMA = [(True, 14.25, 2.25, 1.25), (False, 8.0, 1.0, 0.0)]


def hand_lp(maximize: bool = True):
    """max (or min) 3x + 2y + 5 s.t. x + y <= 4, x + 3y <= 6, x - y = 1, x + y >= 1, x, y >= 0,
    and w in [2, 7] in no row: x - y = 1 and x + 3y <= 6 give y <= 1.25, so x = 2.25, y = 1.25
    and the optimum is 6.75 + 2.5 + 5 = 14.25 (min: x = 1, y = 0, 8). Every kind of row."""
    import pyomo.environ as pe

    m = pe.ConcreteModel(name="hand")
    m.x = pe.Var(domain=pe.NonNegativeReals)
    m.y = pe.Var(domain=pe.NonNegativeReals)
    m.w = pe.Var(bounds=(2, 7))
    m.a = pe.Constraint(expr=m.x + m.y <= 4)
    m.b = pe.Constraint(expr=m.x + 3 * m.y <= 6)
    m.c = pe.Constraint(expr=m.x - m.y == 1)
    m.d = pe.Constraint(expr=m.x + m.y >= 1)
    m.o = pe.Objective(expr=3 * m.x + 2 * m.y + 5, sense=pe.maximize if maximize else pe.minimize)
    return m


def market_split_rows(m: int = 5, n: int = 40, seed: int = 0):
    """A market split problem (Cornuejols and Dawande): find x in {0,1}^n with a x = b, a in
    [0, 99], b = floor(row sum / 2). Branch and bound and CP-SAT take hours at 5 x 40 (none may
    exist): a solver run on it ends only when it is stopped. Returns (a, b) as integer arrays."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(m, n))
    return a, a.sum(axis=1) // 2


def ctrl_c_as_in_a_terminal() -> None:
    """A ``preexec_fn`` for a child that a test sends SIGINT: its default disposition, as a
    command started from a terminal has. A shell without job control starts a background job
    (``pytest ... &`` in a script) with SIGINT ignored, every child inherits that, and a Ctrl-C
    test then fails where the command is right to ignore it (seen in session 56: the audit ran
    on to exit 0, a swallowed-signal script hung to its 120 s timeout)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
