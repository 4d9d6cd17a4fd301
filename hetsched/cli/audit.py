"""``hetsched audit``: search for instances that violate a published bound."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hetsched.cli.args import Output, declare_outputs, json_flag, positive, seed_value
from hetsched.cli.common import EXIT_OK, fmt
from hetsched.core.jsonio import json_text


def cmd_audit(args: argparse.Namespace) -> int:
    from hetsched.audit.claims import find_claim
    from hetsched.audit.engine import CHECK_TOL, parse_reading, run_audit, shrink
    from hetsched.core.errors import InputError
    from hetsched.instance.io import dump_instance, load_instance

    claim = find_claim(args.claim)
    if args.profile not in claim.profiles:
        raise InputError(
            "audit", "--profile", f"{claim.name} has the profiles {', '.join(claim.profiles)}"
        )
    reading = parse_reading(claim, args.reading)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None
    report = run_audit(
        claim,
        trials=args.trials,
        seed=args.seed,
        profile=args.profile,
        out_dir=args.out,
        progress=say,
        reading=reading,
        executor=args.executor,
        workers=args.workers,
        scheduler=args.scheduler,
        batch=args.batch,
    )
    if args.shrink and report["violations"] and report["worst_instance"]:
        small, ev = shrink(
            claim,
            load_instance(report["worst_instance"]),
            claim.profiles[args.profile],
            progress=say,
        )
        path = Path(report["worst_instance"]).with_name("smallest.json")
        dump_instance(small, path)
        report["smallest_violation"] = {
            "instance": str(path),
            "ratio": ev.ratio,
            "bound": ev.bound,
            "checks": ev.checks,
            "details": ev.details,
        }
    for name, check in report["checks"].items() if args.shrink and claim.reductions else ():
        if check["violations"] and check.get(
            "instance"
        ):  # a proof step that fails: its smallest instance too
            small, ev = shrink(
                claim,
                load_instance(check["instance"]),
                claim.profiles[args.profile],
                violated=lambda e, name=name: e.checks.get(name, -1.0) > 1 + CHECK_TOL,
                progress=say,
            )
            path = Path(check["instance"]).with_name(f"smallest-{name}.json")
            dump_instance(small, path)
            check["smallest"] = {
                "instance": str(path),
                "lhs_over_rhs": ev.checks[name],
                "details": ev.details,
            }
    if args.json:
        print(json_text(report))
    else:
        print(f"claim      {report['claim']}: {report['statement']}")
        if report["reading"]:
            print("reading    " + ", ".join(f"{k}={v}" for k, v in report["reading"].items()))
        print(
            f"trials     {report['trials']} ({report['evaluated']} evaluated, {report['skipped']} skipped: "
            "reference not proven)"
        )
        print(
            f"worst      ratio {fmt(report['worst_ratio'])} against bound {fmt(report['bound_at_worst'])}"
        )
        steps = sum(c["violations"] for c in report["checks"].values())
        print(
            f"violations {report['violations']} of the claim"
            + (f"; {steps} of proof steps (checks below)" if steps else "")
        )
        print(f"instance   {report['worst_instance']}")
        for name, c in report["checks"].items():
            print(
                f"check      {name}: worst LHS/RHS {fmt(c['worst_lhs_over_rhs'])}, "
                f"violated in {c['violations']} trial(s) ({c.get('instance', '-')})"
            )
            if "smallest" in c:
                print(
                    f"           smallest: {c['smallest']['instance']} (LHS/RHS {fmt(c['smallest']['lhs_over_rhs'])})"
                )
        if "smallest_violation" in report:
            sv = report["smallest_violation"]
            print(f"smallest   {sv['instance']}: ratio {fmt(sv['ratio'])} > {fmt(sv['bound'])}")
        print(f"log        {report['log']}")
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "audit": "search for instances that violate a published bound",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    from hetsched.audit.claims import claims
    from hetsched.core.executors import EXECUTORS

    a = sub.add_parser("audit", help=COMMANDS["audit"])
    a.add_argument("claim", choices=sorted(claims()))
    a.add_argument("--trials", type=positive(int), default=None, help="default: the profile's")
    a.add_argument("--seed", type=seed_value, default=0)
    a.add_argument(
        "--profile",
        default="ci",
        choices=["ci", "deep", "large"],
        help="ci: small and quick; deep: the long search; large: 20-40 tasks, decided by bounds "
        "(the Hare claims only)",
    )
    a.add_argument(
        "--out",
        default="audit-results",
        help="directory for the trial log (resumable) and instances",
    )
    a.add_argument(
        "--shrink", action="store_true", help="shrink the worst violating instance to a minimal one"
    )
    a.add_argument(
        "--reading",
        action="append",
        metavar="NAME=VALUE",
        help="how to read what the paper leaves open, e.g. jct=f-a, progress=per-worker, "
        "horizon=run-on (hadar-competitive), metric=raw (packing); repeatable or comma-separated; "
        "default: the project's reading (proofs/README.md)",
    )
    a.add_argument(
        "--executor",
        default="serial",
        choices=("serial", *EXECUTORS),
        help="where trials run: in this process (default), a local process pool, or a Dask "
        "cluster (--scheduler); the result does not depend on it",
    )
    a.add_argument("--workers", type=positive(int), default=None, help="local pool size")
    a.add_argument("--scheduler", default=None, help="Dask scheduler address for --executor dask")
    a.add_argument(
        "--batch",
        type=positive(int),
        default=1,
        help="guided trials per batch, each mutating the worst instance found before the batch "
        "(default 1: the worst so far; larger batches run in parallel)",
    )
    a.add_argument("--quiet", action="store_true", help="no per-trial progress on stderr")
    json_flag(a, "claim, trials, worst_ratio, bound_at_worst, violations, worst_instance, ...")
    a.set_defaults(func=cmd_audit)
    declare_outputs(a, Output("out", "dir"))
