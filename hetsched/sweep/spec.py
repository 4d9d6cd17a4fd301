"""A sweep specification (TOML): instances x methods x seeds, and where the results go.

    [sweep]
    name = "small-exact"
    store = "small-exact.jsonl"           # run store (JSON lines), relative to the spec file
                                           # (a shipped example's: to the current directory)
    instances = ["../instances/small/small-0[1-5].json"]   # globs, relative to the spec file
    workloads = ["philly"]                 # generated workloads (seeded), for `simulate` methods
    seeds = [0, 1]
    time_limit = 30                        # per run, for exact methods and relaxations (s)
    threads = 1                            # per run

    [[method]]
    solve = "hare-sched"                   # a formulation (`hetsched models`)
    solver = "highs"                       # default highs
    options = { groups = 2 }               # the formulation's build options, if any

    [[method]]
    heuristic = "hare-alg1"
    order = "hare-sched-rl"                # optional, as `hetsched heuristic`
    rule = "earliest_available"

    [[method]]
    simulate = "hlas:20"                   # an online policy (`hetsched simulate --policy`)
    round_seconds = 360                    # optional, as `hetsched simulate`: round length,
    restore_seconds = 10                   # checkpoint-restore delay,
    convention = "auto"                    # engine convention (auto, hetsched, gavel)

Every method runs on every instance file and every seed; ``simulate`` methods also run on every
workload (built from the seed); ``solve`` and ``heuristic`` methods take instance files only.
Each run's ``objective`` is Hare's sum_n w_n C_n as the validator recomputes it (a simulated
policy's weighted completion), so the rows of one instance compare across methods.
Errors name the file, the key path and the reason.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hetsched.core.errors import HetschedError, InputError

KINDS = ("solve", "heuristic", "simulate")


@dataclass(frozen=True)
class Method:
    kind: str  # solve | heuristic | simulate
    name: str  # formulation, algorithm or policy
    params: dict[str, Any] = field(default_factory=dict)  # solver, options, order, rule, ...

    @property
    def label(self) -> str:
        extra = ",".join(
            f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(self.params.items())
        )
        return f"{self.kind}:{self.name}" + (f"[{extra}]" if extra else "")


@dataclass(frozen=True)
class Task:
    """One run: a method on one instance (file or workload) with one seed."""

    method: Method
    source: str  # an instance file path or a workload spec
    is_file: bool
    seed: int
    time_limit: float | None
    threads: int | None
    ident: str = ""  # the instance's content hash (files) or the workload spec: part of the key

    @property
    def key(self) -> str:
        text = json.dumps([self.method.label, self.ident, self.seed, self.time_limit, self.threads])
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class SweepSpec:
    name: str
    path: Path
    store: Path
    instances: tuple[Path, ...]
    workloads: tuple[str, ...]
    seeds: tuple[int, ...]
    methods: tuple[Method, ...]
    time_limit: float | None
    threads: int | None

    def tasks(self) -> list[Task]:
        """Every (method, instance, seed), in spec order; instance hashes make the keys."""
        from hetsched.instance.io import instance_hash, load_instance

        hashes = {p: instance_hash(load_instance(p)) for p in self.instances}
        out = []
        for m in self.methods:
            for p in self.instances:
                out += [
                    Task(m, str(p), True, s, self.time_limit, self.threads, hashes[p])
                    for s in self.seeds
                ]
            if m.kind == "simulate":
                out += [
                    Task(m, w, False, s, self.time_limit, self.threads, f"workload:{w}")
                    for w in self.workloads
                    for s in self.seeds
                ]
        return out


#: ``check(kind, name, params)``: raises HetschedError if the method does not exist (its
#: formulation, heuristic or policy); :func:`hetsched.sweep.tasks.check_method` is hetsched's
MethodCheck = Callable[[str, str, dict], None]


def read_spec(path: str | Path, check: MethodCheck | None = None) -> SweepSpec:
    """Read and check a sweep spec; any problem raises :class:`InputError` (file, key, reason).
    ``check`` also checks that each method exists (:func:`hetsched.sweep.load_spec` passes
    hetsched's); without it only the spec's form is checked."""
    from hetsched.core.resources import resolve_file, shipped_dir

    p = resolve_file(path, "examples", ".toml", "sweep spec")
    src = p.name
    # a shipped example's store (an output) goes under the current directory, never into the
    # installed package; a spec of the user's keeps it relative to the spec file
    shipped = shipped_dir("examples") in p.resolve().parents
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(src, None, "no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(src, None, f"not valid TOML ({e})") from None
    sweep = data.get("sweep")
    if not isinstance(sweep, dict):
        raise InputError(src, "sweep", "missing [sweep] table")
    base = p.resolve().parent

    def get(key: str, kind, default=None, required: bool = False):
        if key not in sweep:
            if required:
                raise InputError(src, f"sweep.{key}", "missing")
            return default
        v = sweep[key]
        if not isinstance(v, kind) or isinstance(v, bool):
            raise InputError(src, f"sweep.{key}", f"wrong type (got {json.dumps(v, default=str)})")
        return v

    name = get("name", str, p.stem)
    store_name = get("store", str, f"{p.stem}.jsonl")
    store = ((Path.cwd() if shipped else base) / store_name).resolve()
    if not store_name.strip() or store.is_dir():
        raise InputError(src, "sweep.store", f"must name a file (got {json.dumps(store_name)})")
    patterns = get("instances", list, [])
    instances: list[Path] = []
    for i, pat in enumerate(patterns):
        if not isinstance(pat, str):
            raise InputError(src, f"sweep.instances[{i}]", "must be a path or glob")
        found = sorted(Path(f) for f in glob.glob(str(base / pat)))
        if not found:
            raise InputError(
                src, f"sweep.instances[{i}]", f"no file matches '{pat}' (relative to {base})"
            )
        instances += [f for f in found if f not in instances]
    workloads = get("workloads", list, [])
    for i, w in enumerate(workloads):
        if not isinstance(w, str):
            raise InputError(src, f"sweep.workloads[{i}]", "must be a workload name")
    seeds = get("seeds", list, [0])
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise InputError(src, "sweep.seeds", f"must be a non-empty list of integers (got {seeds})")
    time_limit = get("time_limit", (int, float))
    if time_limit is not None and not 0 < time_limit < math.inf:
        raise InputError(src, "sweep.time_limit", f"must be > 0 and finite (got {time_limit})")
    threads = get("threads", int)
    if threads is not None and threads < 1:
        raise InputError(src, "sweep.threads", f"must be >= 1 (got {threads})")

    raw = data.get("method")
    if not isinstance(raw, list) or not raw:
        raise InputError(src, "method", "missing: add at least one [[method]] table")
    methods = [_method(src, f"method[{k}]", m, check) for k, m in enumerate(raw)]
    if not instances and not workloads:
        raise InputError(src, "sweep.instances", "no instances and no workloads: nothing to run")
    for k, m in enumerate(methods):
        if m.kind != "simulate" and not instances:
            raise InputError(
                src, f"method[{k}]", f"'{m.kind}' runs on instance files; sweep.instances is empty"
            )
    return SweepSpec(
        name,
        p.resolve(),
        store,
        tuple(instances),
        tuple(workloads),
        tuple(seeds),
        tuple(methods),
        None if time_limit is None else float(time_limit),
        threads,
    )


ALLOWED = {
    "solve": {"solver", "options"},
    "heuristic": {"order", "rule"},
    "simulate": {"round_seconds", "restore_seconds", "convention"},
}


def _method(src: str, where: str, m: Any, check: MethodCheck | None) -> Method:
    if not isinstance(m, dict):
        raise InputError(src, where, "must be a table")
    kinds = [k for k in KINDS if k in m]
    if len(kinds) != 1:
        raise InputError(
            src,
            where,
            f"needs exactly one of {', '.join(KINDS)} (got {', '.join(kinds) or 'none'})",
        )
    kind = kinds[0]
    name = m[kind]
    if not isinstance(name, str) or not name:
        raise InputError(src, f"{where}.{kind}", "must be a name")
    params = {k: v for k, v in m.items() if k != kind}
    unknown = sorted(set(params) - ALLOWED[kind])
    if unknown:
        raise InputError(
            src,
            f"{where}.{unknown[0]}",
            f"unknown key for a {kind} method (known: {', '.join(sorted(ALLOWED[kind]))})",
        )
    if kind == "solve":
        from hetsched.solvers import SOLVERS

        params.setdefault("solver", "highs")
        if params["solver"] not in SOLVERS:
            raise InputError(
                src,
                f"{where}.solver",
                f"unknown solver '{params['solver']}' (known: {', '.join(SOLVERS)})",
            )
        if not isinstance(params.get("options", {}), dict):
            raise InputError(src, f"{where}.options", "must be a table")
    if check is not None:
        try:
            check(kind, name, params)
        except HetschedError as e:
            raise InputError(src, f"{where}.{kind}", str(e)) from None
    return Method(kind, name, params)
