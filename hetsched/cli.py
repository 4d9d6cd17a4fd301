"""Command line: ``hetsched solve | heuristic | allocate | import-gavel | online | simulate | compare | audit | validate | models | schema | generate | certify | bench``
and (in :mod:`hetsched.cli_research`) ``show | export | sweep | solvers``, (in
:mod:`hetsched.cli_placement`) ``place | place-sim`` and (in :mod:`hetsched.cli_similarity`)
``similarity-sim``.

Exit codes: 0 success; 1 no valid result (infeasible, solver error, invalid solution);
2 bad input (one line on stderr naming the file, JSON path and reason); 3 internal error;
4 broken installation (a shipped file or module is missing).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Sequence

from hetsched.errors import HetschedError, InputError, InstallationError
from hetsched.cli_args import positive_int_list
from hetsched.jsonout import json_text

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL, EXIT_INSTALL = 0, 1, 2, 3, 4


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be a finite number > 0 (got {text})")
        return value
    return parse


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (got {text})")
    return value


def _model_option(text: str) -> tuple[str, object]:
    """NAME=VALUE; VALUE read as JSON (true, 3, 0.5, "x") or else kept as a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (got {text!r})")
    try:
        return name, json.loads(raw)
    except json.JSONDecodeError:
        return name, raw


def _fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.4g}%" if pct else f"{x:.10g}"


def cmd_solve(args: argparse.Namespace) -> int:
    from hetsched.instance.io import load_instance
    from hetsched.schedule import dump_schedule
    from hetsched.solve import solve
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    options = {"groups": args.groups, **dict(args.option or [])}
    res = solve(inst, args.model, args.solver, time_limit=args.time_limit, gap=args.gap,
                threads=args.threads, seed=args.seed, options=options)
    if args.out and res.solution is not None:
        dump_schedule(res.solution, args.out)
    if args.json:
        print(json_text(res.to_dict()))
    else:
        kind, status = "", res.status.value
        if res.objective_is_bound:
            status += " (relaxation)"
            side = res.bound_side
            kind = (f" (relaxation optimum: a{'n' if side == 'upper' else ''} {side} bound on the scheduling problem)" if res.status == Status.OPTIMAL
                    else f" (relaxation incumbent, not a bound; the {side} bound is `bound`)")
        rows = [("instance", f"{res.instance} ({args.instance})"), ("model", res.model), ("solver", res.solver),
                ("status", status), ("objective", _fmt(res.objective) + kind), ("bound", _fmt(res.bound)),
                ("gap", _fmt(res.gap, pct=True)), ("seconds", f"{res.seconds:.3f}")]
        if args.out and res.solution is not None:
            rows.append(("solution", str(args.out)))
        rows += [("note", n) for n in res.notes]
        if res.log:
            rows.append(("log", res.log))  # the method's own summary (iterations, nodes, ...)
        for k, val in rows:
            print(f"{k:<10} {val}")
    ok = res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT) and res.objective is not None
    return EXIT_OK if ok else EXIT_FAIL


def cmd_heuristic(args: argparse.Namespace) -> int:
    from hetsched.heuristic import run_heuristic
    from hetsched.instance.io import load_instance
    from hetsched.schedule import dump_schedule
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    res = run_heuristic(inst, args.algorithm, order=args.order, rule=args.rule, time_limit=args.time_limit,
                        threads=args.threads, seed=args.seed)
    if args.out and res.solution is not None and res.status != Status.ERROR:
        dump_schedule(res.solution, args.out)
    if args.json:
        print(json_text(res.to_dict()))
    else:
        rows = [("instance", f"{res.instance} ({args.instance})"), ("algorithm", res.model), ("order", args.order),
                ("rule", args.rule), ("status", res.status.value), ("objective", _fmt(res.objective)),
                ("bound", _fmt(res.bound)), ("gap", _fmt(res.gap, pct=True)), ("seconds", f"{res.seconds:.3f}")]
        if args.out and res.solution is not None:
            rows.append(("solution", str(args.out)))
        rows += [("note", n) for n in res.notes]
        for k, val in rows:
            print(f"{k:<10} {val}")
    return EXIT_OK if res.status != Status.ERROR and res.objective is not None else EXIT_FAIL


def cmd_audit(args: argparse.Namespace) -> int:
    from hetsched.audit.claims import find_claim
    from hetsched.audit.engine import CHECK_TOL, run_audit, shrink
    from hetsched.instance.io import dump_instance, load_instance

    claim = find_claim(args.claim)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None
    report = run_audit(claim, trials=args.trials, seed=args.seed, profile=args.profile, out_dir=args.out,
                       progress=say)
    if args.shrink and report["violations"] and report["worst_instance"]:
        small, ev = shrink(claim, load_instance(report["worst_instance"]), claim.profiles[args.profile], progress=say)
        path = Path(report["worst_instance"]).with_name("smallest.json")
        dump_instance(small, path)
        report["smallest_violation"] = {"instance": str(path), "ratio": ev.ratio, "bound": ev.bound,
                                        "checks": ev.checks, "details": ev.details}
    for name, check in report["checks"].items() if args.shrink and claim.reductions else ():
        if check["violations"] and check.get("instance"):  # a proof step that fails: its smallest instance too
            small, ev = shrink(claim, load_instance(check["instance"]), claim.profiles[args.profile],
                               violated=lambda e, name=name: e.checks.get(name, -1.0) > 1 + CHECK_TOL, progress=say)
            path = Path(check["instance"]).with_name(f"smallest-{name}.json")
            dump_instance(small, path)
            check["smallest"] = {"instance": str(path), "lhs_over_rhs": ev.checks[name], "details": ev.details}
    if args.json:
        print(json_text(report))
    else:
        print(f"claim      {report['claim']}: {report['statement']}")
        print(f"trials     {report['trials']} ({report['evaluated']} evaluated, {report['skipped']} skipped: "
              "reference not proven)")
        print(f"worst      ratio {_fmt(report['worst_ratio'])} against bound {_fmt(report['bound_at_worst'])}")
        steps = sum(c["violations"] for c in report["checks"].values())
        print(f"violations {report['violations']} of the claim" + (f"; {steps} of proof steps (checks below)" if steps else ""))
        print(f"instance   {report['worst_instance']}")
        for name, c in report["checks"].items():
            print(f"check      {name}: worst LHS/RHS {_fmt(c['worst_lhs_over_rhs'])}, "
                  f"violated in {c['violations']} trial(s) ({c.get('instance', '-')})")
            if "smallest" in c:
                print(f"           smallest: {c['smallest']['instance']} (LHS/RHS {_fmt(c['smallest']['lhs_over_rhs'])})")
        if "smallest_violation" in report:
            sv = report["smallest_violation"]
            print(f"smallest   {sv['instance']}: ratio {_fmt(sv['ratio'])} > {_fmt(sv['bound'])}")
        print(f"log        {report['log']}")
    return EXIT_OK


def cmd_allocate(args: argparse.Namespace) -> int:
    from hetsched.allocate import allocate
    from hetsched.allocation.problem import effective_throughput
    from hetsched.instance.io import load_instance
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    res = allocate(inst, args.policy, packed=args.packed, fast=args.fast, throughputs=args.throughputs,
                   time_limit=args.time_limit, threads=args.threads)
    alloc = res.solution
    out = {"policy": args.policy, "status": res.status.value, "objective": res.objective, "bound": res.bound,
           "gap": res.gap, "seconds": round(res.seconds, 6),
           "allocation": None if alloc is None else alloc.to_dict()["allocation"],
           "effective_throughput": None if alloc is None else alloc.to_dict()["effective_throughput"],
           "notes": res.notes}
    if args.json:
        print(json_text(out))
    else:
        print(f"policy     {args.policy}\nstatus     {res.status.value}\nobjective  {_fmt(res.objective)}\n"
              f"seconds    {res.seconds:.3f}")
        if alloc is not None and not hasattr(alloc, "packing"):
            thr = effective_throughput(alloc.view, alloc.x)
            print(f"{'job':<12}" + "".join(f"{t:>10}" for t in alloc.view.types) + f"{'throughput':>12}")
            for j, job in enumerate(alloc.view.job_ids):
                print(f"{job:<12}" + "".join(f"{alloc.x[j, r]:>10.4f}" for r in range(len(alloc.view.types)))
                      + f"{thr[j]:>12.6g}")
        if alloc is not None and hasattr(alloc, "packing"):
            d = alloc.to_dict()
            for row in d["allocation"]:
                print("  " + "+".join(row["jobs"]) + ": " + ", ".join(f"{t} {row[t]:.4f}" for t in alloc.packing.view.types))
            for job, thr in d["effective_throughput"].items():
                print(f"  throughput {job}: {thr:.6g}")
        for n in res.notes:
            print(f"note       {n}")
    return EXIT_OK if res.status == Status.OPTIMAL else EXIT_FAIL


def cmd_import_gavel(args: argparse.Namespace) -> int:
    from hetsched.allocation.gavel_data import load_throughputs, load_trace, parse_cluster
    from hetsched.instance.io import dump_instance


    inst = load_trace(args.trace, load_throughputs(args.throughputs),
                      parse_cluster(args.cluster), name=args.name)
    dump_instance(inst, args.out)
    print(f"{len(inst.jobs)} jobs on {len(inst.gpus)} GPUs -> {args.out}")
    return EXIT_OK


def cmd_online(args: argparse.Namespace) -> int:
    from hetsched.hadar.certificate import certify_online
    from hetsched.hadar.online import hadar_online
    from hetsched.hadar.validate import validate_decisions
    from hetsched.instance.io import load_instance

    inst = load_instance(args.instance)
    run = hadar_online(inst, select=args.select, comm_cost=args.comm_cost, round_solver=args.round_solver,
                       round_time_limit=args.round_time_limit)
    report = validate_decisions(inst, run.decisions)  # independent of the algorithm
    cert = None if args.no_dual else certify_online(inst, run, tight=args.tight_dual, time_limit=args.time_limit)
    utilities = {j: report.utility_of[j] for j in report.finish}
    out = {"policy": args.policy, "valid": report.valid, "primal_utility": report.utility,
           "dual": cert.to_dict() if cert else None, "finish_slot": report.finish, "jct": report.jct, "utility": utilities,
           "unfinished": [j for j in run.decisions if j not in report.finish],
           "violations": [v.message for v in report.violations], "rounds": run.rounds}
    if args.json:
        print(json_text(out, default=float))
    else:
        print(f"policy     {args.policy} (select {args.select}, rounds by {args.round_solver})\nvalid      {report.valid}\n"
              f"utility    {_fmt(report.utility)} (primal: sum over finished jobs, recomputed by the validator)")
        if cert is not None:
            c = cert.to_dict()
            print(f"dual       {_fmt(cert.dual_at_online_prices)} (P3 at the online prices: OPT <= this)")
            if cert.lp_bound is not None:
                print(f"LP(P2)     {_fmt(cert.lp_bound)} ({'= P3, converged' if cert.lp_converged else 'bound, not converged'}); "
                      f"best offline schedule found {_fmt(cert.offline_primal)}")
            print(f"online/OPT >= {c['online_over_opt_at_least']:.4f}")
        for job in run.decisions:
            if job in report.finish:
                print(f"  {job:<10} finishes in slot {report.finish[job]:<4} JCT {report.jct[job]:g} s  "
                      f"utility {_fmt(report.utility_of[job])}")
            else:
                print(f"  {job:<10} unfinished")
        _print_violations(report.violations)
    return EXIT_OK if report.valid else EXIT_FAIL


def _print_violations(violations) -> None:
    for v in violations:
        print(f"  [{v.kind}] {v.message}")


def cmd_simulate(args: argparse.Namespace) -> int:
    from hetsched.sim.run import file_stem, run_policy
    from hetsched.sim.workloads import load_workload

    inst = load_workload(args.workload, seed=args.seed, n_jobs=args.jobs)
    s = run_policy(inst, args.policy, seed=args.seed, out=args.out, workload=args.workload,
                   round_seconds=args.round_seconds, restore_seconds=args.restore_seconds)
    s.pop("_jct")
    if args.json:
        print(json_text(s))
    else:
        size = (f"{s['tasks']} tasks" if s["level"] == "task"
                else f"{s['rounds']} rounds of {s['round_seconds']:g} s, {s['preemptions']} preemptions")
        print(f"workload   {args.workload} ({s['metrics']['jobs']} jobs, {size}), seed {args.seed}")
        print(f"policy     {args.policy}: valid {s['valid']}, simulated in {s['seconds']:.2f} s")
        for k, val in s["metrics"].items():
            print(f"  {k:<20} {_fmt(val)}")
        if args.out:
            stem = file_stem(args.policy)
            print(f"-> {args.out}/{stem}.json, {args.out}/{stem}-jobs.csv")
    return EXIT_OK


def _family_list(text: str) -> str:
    """``bench exact --family``: ``ladder`` alone, or ``pm-wct`` and/or ``rm-wct`` comma-separated."""
    names = text.split(",")
    if text == "ladder" or (names and len(set(names)) == len(names) and set(names) <= {"pm-wct", "rm-wct"}):
        return text
    raise argparse.ArgumentTypeError(f"'{text}': expected ladder, or pm-wct and/or rm-wct separated by commas")


def _policy_list(text: str) -> list[str]:
    """Comma-separated policy names; a tiresias threshold list (``tiresias:3600,36000``) keeps its commas."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if out and out[-1].startswith("tiresias:") and part.replace(".", "", 1).isdigit():
            out[-1] += "," + part
        else:
            out.append(part)
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    from hetsched.sim.run import compare
    from hetsched.sim.workloads import load_workload

    inst = load_workload(args.workload, seed=args.seed, n_jobs=args.jobs)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None
    rows = compare(inst, _policy_list(args.policies), seed=args.seed, out=args.out, workload=args.workload,
                   progress=say, round_seconds=args.round_seconds, restore_seconds=args.restore_seconds)
    keys = ("avg_jct", "median_jct", "weighted_completion", "makespan", "ftf", "utilization", "queueing_delay")
    from hetsched.tables import aligned

    print(aligned(("policy", *keys), [(r["policy"], *(_fmt(r["metrics"][k]) for k in keys)) for r in rows]))
    print(f"-> {args.out}/compare.json and the JCT CDF in {args.out}/")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from hetsched.formulation import solution_reader
    from hetsched.instance.io import load_instance, read_json
    from hetsched.schedule import FORMAT

    inst = load_instance(args.instance)
    path = Path(args.solution)
    data = read_json(path)
    fmt = data.get("format", FORMAT) if isinstance(data, dict) else FORMAT
    reader = solution_reader(fmt)
    if reader is None:
        raise InputError(path.name, "$.format", f"no formulation reads solutions of format '{fmt}'")
    load, check = reader
    report = check(inst, load(data, path.name))
    if args.json:
        print(json_text(report.to_dict()))
    elif report.valid:
        print(f"valid: objective {_fmt(report.objective)}")
    else:
        print(f"invalid: {len(report.violations)} violation(s)")
        _print_violations(report.violations)
    return EXIT_OK if report.valid else EXIT_FAIL


def cmd_models(args: argparse.Namespace) -> int:
    from hetsched.formulation import formulations
    from hetsched.solvers import SOLVERS

    for (name, kind), spec in sorted(formulations().items()):
        solvers = ",".join(s for s, b in SOLVERS.items() if b.model_kind == kind)
        print(f"{name:<36} {kind:<6} solvers: {solvers:<8} {spec.summary}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from hetsched.instance.schema import INSTANCE_SCHEMA

    text = json.dumps(INSTANCE_SCHEMA, indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_generate(args: argparse.Namespace) -> int:
    from hetsched.generators import generate
    from hetsched.instance.io import dump_instance, instance_to_dict

    inst = generate(args.family, seed=args.seed, name=args.name, n_jobs=args.jobs, n_gpus=args.gpus)
    if args.out:
        dump_instance(inst, args.out)
        print(f"wrote {args.out}: {inst.name}, {len(inst.jobs)} jobs, {len(inst.gpus)} GPUs, {inst.n_tasks} tasks")
    else:
        print(json_text(instance_to_dict(inst), indent=2))
    return EXIT_OK


def cmd_certify(args: argparse.Namespace) -> int:
    from hetsched.certify import DEFAULT_METHODS, certify

    methods = DEFAULT_METHODS
    if args.methods:
        methods = tuple(tuple(m.split("/", 1)) for m in args.methods.split(","))
        bad = [m for m in methods if len(m) != 2 or not all(m)]
        if bad:
            raise InputError("--methods", None, f"expected MODEL/SOLVER,... (got {args.methods!r})")
    manifest = certify(args.instances, args.manifest, time_limit=args.time_limit, methods=methods,
                       progress=lambda line: print(line, flush=True))
    missing = [k for k, e in manifest["instances"].items() if e.get("optimum") is None]
    if missing:
        print(f"not proven by every method: {', '.join(missing)}", file=sys.stderr)
    return EXIT_OK if not missing else EXIT_FAIL


def cmd_bench(args: argparse.Namespace) -> int:
    from hetsched.bench.exact import run_exact_bench
    from hetsched.bench.hare import run_hare_bench

    if args.suite == "gavel":
        from hetsched.bench.gavel import run_gavel_bench

        return run_gavel_bench(out=args.out or "bench-results/gavel.json", as_json=args.json, quick=args.quick,
                               throughputs=args.throughputs)
    if args.suite == "sim":
        from hetsched.bench.sim import run_sim_bench

        return run_sim_bench(out=args.out or "bench-results/sim.json", as_json=args.json, quick=args.quick)
    if args.suite == "hadar":
        from hetsched.bench.hadar import run_hadar_bench

        return run_hadar_bench(out=args.out or "bench-results/hadar.json", as_json=args.json, quick=args.quick)
    if args.suite == "hare":
        return run_hare_bench(out=args.out or "bench-results/hare.json", as_json=args.json, quick=args.quick)
    if args.suite == "exact" and args.family != "ladder":
        from hetsched.bench.wct import run_wct_bench

        solvers = args.solvers.split(",") if args.solvers else ["bp"]
        return run_wct_bench(args.family.split(","), solvers, time_limit=args.time_limit,
                             out=args.out or "bench-results/exact-wct.jsonl", as_json=args.json, quick=args.quick)
    if args.suite == "exact":
        return run_exact_bench(time_limit=args.time_limit, out=args.out or "bench-results/exact.jsonl", as_json=args.json,
                               threads=args.threads, solvers=args.solvers.split(",") if args.solvers else None, quick=args.quick,
                               gpu_counts=tuple(args.gpus), all_sizes=args.all_sizes)
    raise HetschedError(f"unknown benchmark '{args.suite}'")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hetsched")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from hetsched import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    from hetsched.allocation.policies import POLICIES as ALLOCATION_POLICIES
    from hetsched.generators import FAMILIES
    from hetsched.solvers import SOLVERS

    p = argparse.ArgumentParser(prog="hetsched", description="Scheduling DL jobs on heterogeneous GPU clusters.")
    p.add_argument("--version", action="version", version=f"hetsched {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="solve an instance exactly (or a relaxation of it)")
    s.add_argument("instance", help="instance JSON file")
    s.add_argument("--model", default="hare-sched", help="formulation (see `hetsched models`)")
    s.add_argument("--solver", default="auto", choices=["auto", *sorted(SOLVERS)],
                   help="auto (default): the strongest method that takes the instance and model, named in the output")
    s.add_argument("--time-limit", type=_positive(float), default=None, metavar="S", help="solver time limit (s)")
    s.add_argument("--gap", type=_non_negative_float, default=0.0, help="relative gap to stop at (default 0)")
    s.add_argument("--threads", type=_positive(int), default=None, metavar="N")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--groups", type=_positive(int), default=None, metavar="U", help="gpu-grouping: number of groups")
    s.add_argument("--option", type=_model_option, action="append", metavar="NAME=VALUE",
                   help="a keyword option of the formulation (see `hetsched models`), e.g. place_all=true; repeatable")
    s.add_argument("--out", type=Path, default=None, metavar="SOLUTION.json", help="write the solution here")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_solve)

    from hetsched.audit.claims import claims
    from hetsched.heuristic import ALGORITHMS
    from hetsched.heuristics.list_scheduling import MACHINE_RULES
    from hetsched.orderings import ORDERINGS

    h = sub.add_parser("heuristic", help="run a heuristic (Hare's Algorithm 1) and validate its schedule")
    h.add_argument("instance", help="instance JSON file")
    h.add_argument("--algorithm", default="hare-alg1", choices=ALGORITHMS)
    h.add_argument("--order", default="hare-interval-lp", choices=sorted(ORDERINGS),
                   help="where H comes from (default: the interval-indexed LP, which scales to 200 jobs x 160 GPUs; "
                        "the paper's line 3, Hare_Sched_RL, is --order hare-sched-rl and is slow past ~12 tasks)")
    h.add_argument("--rule", default="earliest_available", choices=MACHINE_RULES,
                   help="GPU choice (default: the paper's earliest available GPU)")
    h.add_argument("--time-limit", type=_positive(float), default=None, metavar="S", help="for the ordering's relaxation")
    h.add_argument("--threads", type=_positive(int), default=None, metavar="N")
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--out", type=Path, default=None, metavar="SOLUTION.json")
    h.add_argument("--json", action="store_true", help="print one JSON object (the same keys as solve)")
    h.set_defaults(func=cmd_heuristic)

    a = sub.add_parser("audit", help="search for instances that violate a published bound")
    a.add_argument("claim", choices=sorted(claims()))
    a.add_argument("--trials", type=_positive(int), default=None, help="default: the profile's")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--profile", default="ci", choices=["ci", "deep"])
    a.add_argument("--out", default="audit-results", help="directory for the trial log (resumable) and instances")
    a.add_argument("--shrink", action="store_true", help="shrink the worst violating instance to a minimal one")
    a.add_argument("--quiet", action="store_true", help="no per-trial progress on stderr")
    a.add_argument("--json", action="store_true",
                   help="print one JSON object: claim, trials, worst_ratio, bound_at_worst, violations, worst_instance, ...")
    a.set_defaults(func=cmd_audit)

    al = sub.add_parser("allocate", help="Gavel's heterogeneity-aware allocation LPs (x_{j,r} per GPU type)")
    al.add_argument("instance", help="instance JSON file (jobs need a throughput per GPU type)")
    al.add_argument("--policy", required=True, choices=ALLOCATION_POLICIES)
    al.add_argument("--packed", action="store_true", help="space sharing over job pairs (pair throughputs from "
                    "--throughputs): max-min-fairness-perf, max-throughput")
    al.add_argument("--throughputs", default=None,
                    help="Gavel's throughput table for --packed (default: data/gavel/simulation_throughputs.json)")
    al.add_argument("--fast", action="store_true", help="array-built LP with identical jobs merged "
                    "(max-min-fairness, max-min-fairness-perf, makespan); same validation")
    al.add_argument("--time-limit", type=_positive(float), default=None, metavar="S")
    al.add_argument("--threads", type=_positive(int), default=None, metavar="N")
    al.add_argument("--json", action="store_true", help="one JSON object: policy, status, objective, allocation, seconds, ...")
    al.set_defaults(func=cmd_allocate)

    ig = sub.add_parser("import-gavel", help="a Gavel trace + throughput table -> an instance file")
    ig.add_argument("trace", help="Gavel trace (10-field physical_cluster or 7-field format)")
    ig.add_argument("--throughputs", default=None)
    ig.add_argument("--cluster", default="v100=4,p100=4,k80=4", help="GPU counts per worker type")
    ig.add_argument("--name", default=None)
    ig.add_argument("--out", required=True)
    ig.set_defaults(func=cmd_import_gavel)

    on = sub.add_parser("online", help="run an online policy slot by slot (Hadar's Algorithm 1) and validate it")
    on.add_argument("instance")
    on.add_argument("--policy", default="hadar", choices=["hadar"])
    on.add_argument("--select", default="min-cost", choices=["min-cost", "max-payoff"],
                    help="FIND_ALLOC's choice among candidate gangs (min-cost: as printed, line 28)")
    on.add_argument("--comm-cost", type=_non_negative_float, default=0.0,
                    help="cost per extra machine per GPU of a spread gang (the paper gives no number)")
    on.add_argument("--round-solver", default="dp", choices=["dp", "bnb"],
                    help="DP_allocation by the memoized DP (exact) or branch and bound (long queues)")
    on.add_argument("--round-time-limit", type=_non_negative_float, default=1.0, help="per round, for --round-solver bnb")
    on.add_argument("--no-dual", action="store_true", help="skip the dual certificate (it prices every slot of the horizon)")
    on.add_argument("--tight-dual", action="store_true",
                    help="also compute LP(P2) = P3 by column generation (the tightest dual certificate)")
    on.add_argument("--time-limit", type=_non_negative_float, default=60.0, help="for --tight-dual")
    on.add_argument("--json", action="store_true")
    on.set_defaults(func=cmd_online)

    from hetsched.sim.policies import GROUPED, POLICIES

    task_names = [f"{p}[:U groups]" if p in GROUPED else p for p in sorted(POLICIES)]
    policy_names = sorted(POLICIES) + ["gavel[:max-min-fairness-perf|max-min-fairness|makespan]",
                                       "hadar[:bnb|dp]", "tiresias[:T1,T2,...]", "yarn-cs[:strict]"]

    def add_engine_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--round-seconds", type=_positive(float), default=360.0, metavar="S",
                       help="job-level policies: scheduling round length (default 360, Gavel's and Hadar's)")
        p.add_argument("--restore-seconds", type=float, default=10.0, metavar="S",
                       help="job-level policies: checkpoint-restore delay when a job resumes or moves (default 10, Hadar's)")

    workload_help = ("an instance file, hare-table2, gavel-poisson, philly[:VC] (480-job busy window), philly-static[:VC] (its jobs all at time 0) or "
                     "gavel-trace:PATH (see hetsched.sim.workloads)")
    sm = sub.add_parser("simulate", help="simulate an online policy on a workload; validated; metrics")
    sm.add_argument("workload", help=workload_help)
    sm.add_argument("--policy", required=True, metavar="NAME",
                    help=f"task-level: {', '.join(task_names)}; job-level (gang): {', '.join(policy_names[len(POLICIES):])}")
    sm.add_argument("--seed", type=int, default=0)
    sm.add_argument("--jobs", type=_positive(int), default=None, help="jobs of a generated workload")
    sm.add_argument("--out", default=None, help="directory for POLICY.json and POLICY-jobs.csv")
    sm.add_argument("--json", action="store_true", help="keys: policy, seed, workload, metrics, valid, seconds")
    add_engine_options(sm)
    sm.set_defaults(func=cmd_simulate)

    cp = sub.add_parser("compare", help="several policies on one workload: a table, JSON, per-job CSVs, JCT CDF")
    cp.add_argument("workload", help=workload_help)
    cp.add_argument("--policies", required=True, help=f"comma-separated, from: {', '.join(policy_names)}")
    cp.add_argument("--seed", type=int, default=0)
    cp.add_argument("--jobs", type=_positive(int), default=None)
    cp.add_argument("--out", default="sim-results", help="results; runs already there are kept (resume)")
    cp.add_argument("--quiet", action="store_true")
    add_engine_options(cp)
    cp.set_defaults(func=cmd_compare)

    v = sub.add_parser("validate", help="check a solution against an instance; exit 0 valid, 1 invalid")
    v.add_argument("instance")
    v.add_argument("solution")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_validate)

    m = sub.add_parser("models", help="list the formulations and the solvers that take them")
    m.set_defaults(func=cmd_models)

    sc = sub.add_parser("schema", help="print the instance JSON Schema")
    sc.add_argument("--out", default=None)
    sc.set_defaults(func=cmd_schema)

    g = sub.add_parser("generate", help="generate a random instance (seeded)")
    g.add_argument("family", choices=sorted(FAMILIES))
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--name", default=None)
    g.add_argument("--jobs", type=_positive(int), default=None, metavar="N", help="jobs (pm-wct, rm-wct, hare-table2, hadar-cluster)")
    g.add_argument("--gpus", type=_positive(int), default=None, metavar="M", help="GPUs (pm-wct, rm-wct, hare-table2)")
    g.add_argument("--out", default=None, help="file to write (default: print the JSON)")
    g.set_defaults(func=cmd_generate)

    c = sub.add_parser("certify", help="prove optima with two exact methods and record them in a manifest")
    c.add_argument("instances", nargs="+")
    c.add_argument("--manifest", required=True, help="JSON manifest (updated as each instance is done; resumable)")
    c.add_argument("--time-limit", type=_positive(float), default=300.0, metavar="S")
    c.add_argument("--methods", default=None, metavar="MODEL/SOLVER,...",
                   help="exact methods that must all prove the same optimum (default hare-sched-ti/highs,hare-sched/cpsat)")
    c.set_defaults(func=cmd_certify)

    b = sub.add_parser("bench", help="measure speed; results as JSON")
    b.add_argument("suite", choices=["exact", "hare", "gavel", "hadar", "sim"],
                   help="exact: largest sizes each exact method proves; hare: Algorithm 1 tasks/s and the paper-scale "
                        "pipeline; gavel: max-min fairness at 256-2048 jobs against cvxpy+ECOS; hadar: DP_allocation "
                        "with 2000 queued jobs on 60 GPUs (exact DP vs branch and bound, one round, online rounds); sim: simulated "
                        "jobs/s on the Philly window and 10,000 jobs")
    b.add_argument("--throughputs", default=None,
                   help="gavel: Gavel's throughput table")
    b.add_argument("--time-limit", type=_positive(float), default=60.0, metavar="S")
    b.add_argument("--threads", type=_positive(int), default=2, metavar="N")
    b.add_argument("--solvers", default=None,
                   help="exact: methods to run (default highs,cpsat,colgen on the ladder, bp on pm-wct/rm-wct)")
    b.add_argument("--family", default="ladder", type=_family_list, metavar="F[,F]",
                   help="exact: ladder (Hare's rounds; default), or the literature's P||sum wC and R||sum wC "
                        "families pm-wct and rm-wct, one or both (pm-wct,rm-wct)")
    b.add_argument("--gpus", default="2,4,8", type=positive_int_list, metavar="M,M",
                   help="exact: the GPU counts of the ladder instances")
    b.add_argument("--all-sizes", action="store_true",
                   help="exact: run every size, also past the first one a method does not prove (its gap at the limit)")
    b.add_argument("--out", default=None, help="exact: JSON lines (default bench-results/exact.jsonl), appended as "
                   "each run ends, rerunning resumes; hare: one JSON file (default bench-results/hare.json)")
    b.add_argument("--quick", action="store_true", help="the two smallest sizes only (a smoke test)")
    b.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    b.set_defaults(func=cmd_bench)

    from hetsched.cli_placement import register as register_placement
    from hetsched.cli_research import register
    from hetsched.cli_similarity import register as register_similarity

    register(sub, _positive(int))
    register_placement(sub, _positive(int), _positive(float))
    register_similarity(sub, _positive(int), _positive(float))
    p.set_defaults(build_parser=build_parser)  # `docs` renders this parser's help without importing the CLI
    return p


#: commands that can run for more than a few seconds: a status line on stderr while they run
#: (sweep has its own progress bar)
LONG_COMMANDS = frozenset({"solve", "heuristic", "audit", "allocate", "online", "simulate", "compare", "certify",
                           "bench", "place", "place-sim", "similarity-sim", "export"})
#: commands whose --time-limit bounds the whole command (elsewhere it bounds each run or trial)
WHOLE_COMMAND_LIMIT = frozenset({"solve", "heuristic", "allocate"})


def _terminate(signum, frame) -> None:
    """SIGTERM takes the path of Ctrl-C: every child (pool workers, solver threads) is stopped and
    what is stored stays stored."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        if args.command in LONG_COMMANDS:
            from hetsched.progress import Heartbeat

            limit = getattr(args, "time_limit", None) if args.command in WHOLE_COMMAND_LIMIT else None
            with Heartbeat(args.command, limit):
                return args.func(args)
        return args.func(args)
    except InstallationError as exc:  # hetsched itself is incomplete: not the user's input
        print(f"hetsched: installation error: {exc}", file=sys.stderr)
        return EXIT_INSTALL
    except HetschedError as exc:  # InputError included: file, JSON path, reason
        print(f"hetsched: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("hetsched: interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, also for SIGTERM: stopped on request
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_OK
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("HETSCHED_DEBUG"):
            raise
        print(f"hetsched: internal error: {exc.__class__.__name__}: {exc} (set HETSCHED_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
