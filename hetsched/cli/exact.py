"""Exact and heuristic solving of one instance and the instance tools: ``solve``, ``heuristic``, ``validate``,
``models``, ``schema``, ``generate``, ``certify``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hetsched.cli.args import (
    MAX_GPUS,
    MAX_JOBS,
    Output,
    add_solver_limits,
    count,
    declare_outputs,
    json_flag,
    model_option,
    non_negative_float,
    positive,
    seconds,
    seed_value,
)
from hetsched.cli.common import EXIT_FAIL, EXIT_OK, fmt, print_violations
from hetsched.core.errors import InputError
from hetsched.core.jsonio import json_text, write_json


def cmd_solve(args: argparse.Namespace) -> int:
    from hetsched.exact.solve import solve
    from hetsched.instance.io import load_instance
    from hetsched.schedule.io import dump_schedule
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    options = {"groups": args.groups, **dict(args.option or [])}
    res = solve(
        inst,
        args.model,
        args.solver,
        time_limit=args.time_limit,
        gap=args.gap,
        threads=args.threads,
        seed=args.seed,
        options=options,
    )
    if args.out and res.solution is not None:
        dump_schedule(res.solution, args.out)
    if args.json:
        write_json(res.to_dict(lazy=True), sys.stdout)  # streamed: a schedule may have 1e6 tasks
        print()
    else:
        kind, status = "", res.status.value
        if res.objective_is_bound:
            status += " (relaxation)"
            side = res.bound_side
            kind = (
                f" (relaxation optimum: a{'n' if side == 'upper' else ''} {side} bound on the scheduling problem)"
                if res.status == Status.OPTIMAL
                else f" (relaxation incumbent, not a bound; the {side} bound is `bound`)"
            )
        rows = [
            ("instance", f"{res.instance} ({args.instance})"),
            ("model", res.model),
            ("solver", res.solver),
            ("status", status),
            ("objective", fmt(res.objective) + kind),
            ("bound", fmt(res.bound)),
            ("gap", fmt(res.gap, pct=True)),
            ("seconds", f"{res.seconds:.3f}"),
        ]
        if args.out and res.solution is not None:
            rows.append(("solution", str(args.out)))
        rows += [("note", n) for n in res.notes]
        if res.log:
            rows.append(("log", res.log))  # the method's own summary (iterations, nodes, ...)
        for k, val in rows:
            print(f"{k:<10} {val}")
    ok = (
        res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT)
        and res.objective is not None
    )
    return EXIT_OK if ok else EXIT_FAIL


def cmd_heuristic(args: argparse.Namespace) -> int:
    from hetsched.hare.heuristic import run_heuristic
    from hetsched.instance.io import load_instance
    from hetsched.schedule.io import dump_schedule
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    res = run_heuristic(
        inst,
        args.algorithm,
        order=args.order,
        rule=args.rule,
        time_limit=args.time_limit,
        threads=args.threads,
        seed=args.seed,
    )
    if args.out and res.solution is not None and res.status != Status.ERROR:
        dump_schedule(res.solution, args.out)
    if args.json:
        write_json(res.to_dict(lazy=True), sys.stdout)  # streamed: a schedule may have 1e6 tasks
        print()
    else:
        rows = [
            ("instance", f"{res.instance} ({args.instance})"),
            ("algorithm", res.model),
            ("order", args.order),
            ("rule", args.rule),
            ("status", res.status.value),
            ("objective", fmt(res.objective)),
            ("bound", fmt(res.bound)),
            ("gap", fmt(res.gap, pct=True)),
            ("seconds", f"{res.seconds:.3f}"),
        ]
        if args.out and res.solution is not None:
            rows.append(("solution", str(args.out)))
        rows += [("note", n) for n in res.notes]
        for k, val in rows:
            print(f"{k:<10} {val}")
    return EXIT_OK if res.status != Status.ERROR and res.objective is not None else EXIT_FAIL


def cmd_validate(args: argparse.Namespace) -> int:
    from hetsched.core.jsonio import read_json
    from hetsched.exact.registry import solution_reader
    from hetsched.instance.io import load_instance
    from hetsched.schedule.model import FORMAT

    inst = load_instance(args.instance)
    path = Path(args.solution)
    data = read_json(path)
    name = data.get("format", FORMAT) if isinstance(data, dict) else FORMAT
    reader = solution_reader(name)
    if reader is None:
        raise InputError(
            str(path), "$.format", f"no formulation reads solutions of format '{name}'"
        )
    load, check = reader
    report = check(inst, load(data, str(path)))
    if args.json:
        print(json_text(report.to_dict()))
    elif report.valid:
        print(f"valid: objective {fmt(report.objective)}")
    else:
        print(f"invalid: {len(report.violations)} violation(s)")
        print_violations(report.violations)
    return EXIT_OK if report.valid else EXIT_FAIL


def cmd_models(args: argparse.Namespace) -> int:
    from hetsched.exact.registry import formulations
    from hetsched.solvers import SOLVERS

    for (name, kind), spec in sorted(formulations().items()):
        solvers = ",".join(s for s, b in SOLVERS.items() if b.model_kind == kind)
        print(f"{name:<36} {kind:<6} solvers: {solvers:<8} {spec.summary}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from hetsched.core.files import write_text_atomic
    from hetsched.instance.schema import INSTANCE_SCHEMA

    text = json.dumps(INSTANCE_SCHEMA, indent=2) + "\n"
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_generate(args: argparse.Namespace) -> int:
    from hetsched.instance.generators import generate
    from hetsched.instance.io import dump_instance, instance_to_dict

    inst = generate(
        args.family,
        seed=args.seed,
        name=args.name,
        n_jobs=args.jobs,
        n_gpus=args.gpus,
        n_tasks=args.tasks,
        rounds=args.rounds,
        tasks_per_round=args.tasks_per_round,
    )
    if args.out:
        dump_instance(inst, args.out)
        print(
            f"wrote {args.out}: {inst.name}, {len(inst.jobs)} jobs, {len(inst.gpus)} GPUs, {inst.n_tasks} tasks"
        )
    else:
        print(json_text(instance_to_dict(inst), indent=2))
    return EXIT_OK


def cmd_certify(args: argparse.Namespace) -> int:
    from hetsched.exact.certify import DEFAULT_METHODS, certify

    methods = DEFAULT_METHODS
    if args.methods:
        methods = tuple(tuple(m.split("/", 1)) for m in args.methods.split(","))
        bad = [m for m in methods if len(m) != 2 or not all(m)]
        if bad:
            raise InputError("--methods", None, f"expected MODEL/SOLVER,... (got {args.methods!r})")
    manifest = certify(
        args.instances,
        args.manifest,
        time_limit=args.time_limit,
        methods=methods,
        progress=lambda line: print(line, flush=True),
    )
    missing = [k for k, e in manifest["instances"].items() if e.get("optimum") is None]
    if missing:
        print(f"not proven by every method: {', '.join(missing)}", file=sys.stderr)
    return EXIT_OK if not missing else EXIT_FAIL


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "solve": "solve an instance exactly (or a relaxation of it)",
    "heuristic": "run a heuristic (Hare's Algorithm 1) and validate its schedule",
    "validate": "check a solution against an instance; exit 0 valid, 1 invalid",
    "models": "list the formulations and the solvers that take them",
    "schema": "print the instance JSON Schema",
    "generate": "generate a random instance (seeded)",
    "certify": "prove optima with two exact methods and record them in a manifest",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    from hetsched.hare.heuristic import ALGORITHMS
    from hetsched.hare.list_scheduling import MACHINE_RULES
    from hetsched.hare.orderings import ORDERINGS
    from hetsched.instance.generators import FAMILIES
    from hetsched.solvers import SOLVERS

    s = sub.add_parser("solve", help=COMMANDS["solve"])
    s.add_argument("instance", help="instance JSON file")
    s.add_argument("--model", default="hare-sched", help="formulation (see `hetsched models`)")
    s.add_argument(
        "--solver",
        default="auto",
        choices=["auto", *sorted(SOLVERS)],
        help="auto (default): the strongest method that takes the instance and model, named in the output",
    )
    add_solver_limits(s, "solver time limit (s)", seed=True)
    s.add_argument(
        "--gap", type=non_negative_float, default=0.0, help="relative gap to stop at (default 0)"
    )
    s.add_argument(
        "--groups",
        type=positive(int),
        default=None,
        metavar="U",
        help="gpu-grouping: number of groups",
    )
    s.add_argument(
        "--option",
        type=model_option,
        action="append",
        metavar="NAME=VALUE",
        help="a keyword option of the formulation (see `hetsched models`), e.g. place_all=true; repeatable",
    )
    s.add_argument(
        "--out", type=Path, default=None, metavar="SOLUTION.json", help="write the solution here"
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_solve)
    declare_outputs(s, Output("out"))

    h = sub.add_parser("heuristic", help=COMMANDS["heuristic"])
    h.add_argument("instance", help="instance JSON file")
    h.add_argument("--algorithm", default="hare-alg1", choices=ALGORITHMS)
    h.add_argument(
        "--order",
        default="hare-interval-lp",
        choices=sorted(ORDERINGS),
        help="where H comes from (default: the interval-indexed LP, which scales to 200 jobs x 160 GPUs; "
        "the paper's line 3, Hare_Sched_RL, is --order hare-sched-rl and is slow past ~12 tasks)",
    )
    h.add_argument(
        "--rule",
        default="earliest_available",
        choices=MACHINE_RULES,
        help="GPU choice (default: the paper's earliest available GPU)",
    )
    add_solver_limits(h, "for the ordering's relaxation", seed=True)
    h.add_argument("--out", type=Path, default=None, metavar="SOLUTION.json")
    json_flag(h, "the same keys as solve")
    h.set_defaults(func=cmd_heuristic)
    declare_outputs(h, Output("out"))

    v = sub.add_parser("validate", help=COMMANDS["validate"])
    v.add_argument("instance")
    v.add_argument("solution")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_validate)

    m = sub.add_parser("models", help=COMMANDS["models"])
    m.set_defaults(func=cmd_models)

    sc = sub.add_parser("schema", help=COMMANDS["schema"])
    sc.add_argument("--out", default=None)
    sc.set_defaults(func=cmd_schema)
    declare_outputs(sc, Output("out"))

    g = sub.add_parser("generate", help=COMMANDS["generate"])
    g.add_argument("family", choices=sorted(FAMILIES))
    g.add_argument("--seed", type=seed_value, required=True)
    g.add_argument("--name", default=None)
    g.add_argument(
        "--jobs",
        type=count(MAX_JOBS),
        default=None,
        metavar="N",
        help="jobs (pm-wct, rm-wct, hare-table2, hadar-cluster, hare-random)",
    )
    g.add_argument(
        "--gpus",
        type=count(MAX_GPUS),
        default=None,
        metavar="M",
        help="GPUs (pm-wct, rm-wct, hare-table2, ladder, hare-random)",
    )
    g.add_argument(
        "--tasks",
        type=count(MAX_JOBS),
        default=None,
        metavar="N",
        help="tasks in all (ladder: a multiple of 4, jobs of 2 rounds x 2 tasks)",
    )
    g.add_argument(
        "--rounds",
        type=count(1000),
        default=None,
        metavar="R",
        help="hare-random: each job has 1..R rounds (default 3)",
    )
    g.add_argument(
        "--tasks-per-round",
        type=count(1000),
        default=None,
        metavar="K",
        help="hare-random: each round has 1..K tasks (default 3)",
    )
    g.add_argument("--out", default=None, help="file to write (default: print the JSON)")
    g.set_defaults(func=cmd_generate)
    declare_outputs(g, Output("out"))

    c = sub.add_parser("certify", help=COMMANDS["certify"])
    c.add_argument("instances", nargs="+")
    c.add_argument(
        "--manifest",
        required=True,
        help="JSON manifest (updated as each instance is done; resumable)",
    )
    c.add_argument("--time-limit", type=seconds, default=300.0, metavar="S")
    c.add_argument(
        "--methods",
        default=None,
        metavar="MODEL/SOLVER,...",
        help="exact methods that must all prove the same optimum (default hare-sched-ti/highs,hare-sched/cpsat)",
    )
    c.set_defaults(func=cmd_certify)
    declare_outputs(c, Output("manifest"))
