"""``hetsched similarity-sim``: the AppSci'24 round-based model-similarity policy with job packing
simulated on Gavel's measured throughputs (:mod:`hetsched.sim.similarity`). Registered by
:func:`hetsched.cli.build_parser`; errors are :class:`HetschedError` (exit 2)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hetsched.cli.args import MAX_JOBS, count, name_list, positive
from hetsched.cli.common import EXIT_OK
from hetsched.jsonout import json_text


def cmd_similarity_sim(args: argparse.Namespace) -> int:
    from hetsched.allocation.gavel_data import parse_cluster
    from hetsched.sim.similarity import similarity_workload, simulate_similarity
    from hetsched.stored_runs import run_or_resume

    wl = similarity_workload(args.seed, args.jobs, args.arrival_span, parse_cluster(args.cluster))
    out = Path(args.out) if args.out else None
    results = []
    for variant in args.variants:
        tag = f"{variant}-{'cd' if not args.no_cd else 'nocd'}-{'jp' if args.packing else 'nojp'}-{args.exact or 'greedy'}-{args.round_minutes:g}min"
        res = run_or_resume(
            out,
            f"{wl.name}-{tag}",
            lambda: simulate_similarity(
                wl,
                variant,
                change_decisions=not args.no_cd,
                packing=args.packing,
                exact=args.exact,
                round_minutes=args.round_minutes,
            ),
            ["id", "row", "arrival", "start", "completion"],
        )
        results.append(res)
        if not args.json:
            m = res["metrics"]
            print(
                f"{res['policy']:<40} makespan {m['makespan']:9.0f}  avg JCT {m['avg_jct']:9.0f}  "
                f"waiting {m['waiting_time']:8.0f}  utilization {m['utilization']:.3f}  (s)",
                flush=True,
            )
    if args.json:
        print(
            json_text(
                {
                    "workload": wl.name,
                    "results": [{"policy": r["policy"], "metrics": r["metrics"]} for r in results],
                }
            )
        )
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "similarity-sim": "simulate the AppSci'24 model-similarity policy (rounds, job packing)",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    positive_float = positive(float)
    from hetsched.similarity.round import VARIANTS

    s = sub.add_parser(
        "similarity-sim",
        help=COMMANDS["similarity-sim"],
    )
    s.add_argument(
        "--variants",
        type=name_list(VARIANTS, "variant"),
        default=list(VARIANTS),
        help=f"comma-separated ({', '.join(VARIANTS)})",
    )
    s.add_argument("--jobs", type=count(MAX_JOBS), default=50)
    s.add_argument(
        "--arrival-span",
        type=float,
        default=0.0,
        metavar="MIN",
        help="arrivals uniform over this many minutes (0: all at once)",
    )
    s.add_argument("--cluster", default="k80=4,p100=4,v100=4", help="GPUs per type")
    s.add_argument("--round-minutes", type=positive_float, default=3.0)
    s.add_argument("--no-cd", action="store_true", help="decisions are not changed in later rounds")
    s.add_argument(
        "--packing",
        action="store_true",
        help="job packing (Algorithm 3, or the exact packing with --exact)",
    )
    s.add_argument(
        "--exact",
        choices=("truth", "estimated"),
        default=None,
        help="exact rounds instead of Algorithms 2 and 3, ranked by true or estimated throughputs",
    )
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="per-job CSVs and the run store runs.jsonl; a rerun resumes",
    )
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_similarity_sim)
