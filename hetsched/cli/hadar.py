"""``hetsched online``: Hadar's online Algorithm 1, slot by slot, validated, beside its dual certificate."""

from __future__ import annotations

import argparse

from hetsched.cli.args import non_negative_float, seconds
from hetsched.cli.common import EXIT_FAIL, EXIT_OK, fmt, print_violations
from hetsched.core.jsonio import json_text


def cmd_online(args: argparse.Namespace) -> int:
    from hetsched.hadar.certificate import certify_online
    from hetsched.hadar.online import hadar_online
    from hetsched.hadar.validate import validate_decisions
    from hetsched.instance.io import load_instance

    inst = load_instance(args.instance)
    run = hadar_online(
        inst,
        select=args.select,
        comm_cost=args.comm_cost,
        round_solver=args.round_solver,
        round_time_limit=args.round_time_limit,
    )
    report = validate_decisions(inst, run.decisions)  # independent of the algorithm
    cert = (
        None
        if args.no_dual
        else certify_online(inst, run, tight=args.tight_dual, time_limit=args.time_limit)
    )
    utilities = {j: report.utility_of[j] for j in report.finish}
    out = {
        "policy": args.policy,
        "valid": report.valid,
        "primal_utility": report.utility,
        "dual": cert.to_dict() if cert else None,
        "finish_slot": report.finish,
        "jct": report.jct,
        "utility": utilities,
        "unfinished": [j for j in run.decisions if j not in report.finish],
        "violations": [v.message for v in report.violations],
        "rounds": run.rounds,
    }
    if args.json:
        print(json_text(out, default=float))
    else:
        print(
            f"policy     {args.policy} (select {args.select}, rounds by {args.round_solver})\nvalid      {report.valid}\n"
            f"utility    {fmt(report.utility)} (primal: sum over finished jobs, recomputed by the validator)"
        )
        if cert is not None:
            c = cert.to_dict()
            print(
                f"dual       {fmt(cert.dual_at_online_prices)} (P3 at the online prices: OPT <= this)"
            )
            if cert.lp_bound is not None:
                print(
                    f"LP(P2)     {fmt(cert.lp_bound)} ({'= P3, converged' if cert.lp_converged else 'bound, not converged'}); "
                    f"best offline schedule found {fmt(cert.offline_primal)}"
                )
            print(f"online/OPT >= {c['online_over_opt_at_least']:.4f}")
        for job in run.decisions:
            if job in report.finish:
                print(
                    f"  {job:<10} finishes in slot {report.finish[job]:<4} JCT {report.jct[job]:g} s  "
                    f"utility {fmt(report.utility_of[job])}"
                )
            else:
                print(f"  {job:<10} unfinished")
        print_violations(report.violations)
    return EXIT_OK if report.valid else EXIT_FAIL


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "online": "run an online policy slot by slot (Hadar's Algorithm 1) and validate it",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    on = sub.add_parser("online", help=COMMANDS["online"])
    on.add_argument("instance")
    on.add_argument("--policy", default="hadar", choices=["hadar"])
    on.add_argument(
        "--select",
        default="min-cost",
        choices=["min-cost", "max-payoff"],
        help="FIND_ALLOC's choice among candidate gangs (min-cost: as printed, line 28)",
    )
    on.add_argument(
        "--comm-cost",
        type=non_negative_float,
        default=0.0,
        help="cost per extra machine per GPU of a spread gang (the paper gives no number)",
    )
    on.add_argument(
        "--round-solver",
        default="dp",
        choices=["dp", "bnb"],
        help="DP_allocation by the memoized DP (exact) or branch and bound (long queues)",
    )
    on.add_argument(
        "--round-time-limit",
        type=non_negative_float,
        default=1.0,
        help="per round, for --round-solver bnb",
    )
    on.add_argument(
        "--no-dual",
        action="store_true",
        help="skip the dual certificate (it prices every slot of the horizon)",
    )
    on.add_argument(
        "--tight-dual",
        action="store_true",
        help="also compute LP(P2) = P3 by column generation (the tightest dual certificate)",
    )
    on.add_argument("--time-limit", type=seconds, default=60.0, help="for --tight-dual")
    on.add_argument("--json", action="store_true")
    on.set_defaults(func=cmd_online)
