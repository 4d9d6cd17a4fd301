"""``hetsched similarity-sim``: a shortcut for ``hetsched compare`` of the AppSci'24
model-similarity policy's variants on its evaluation's workload (``similarity-jobs``,
:mod:`hetsched.similarity.workload`) in the one gang simulator. Registered by
:func:`hetsched.cli.build_parser`; errors are :class:`HetschedError` (exit 2)."""

from __future__ import annotations

import argparse

from hetsched.cli.args import MAX_JOBS, add_results_folder, count, name_list, positive, seed_value
from hetsched.cli.common import EXIT_OK


def policy_name(variant: str, no_cd: bool, packing: bool, exact: str | None) -> str:
    """The gang policy of one variant (:mod:`hetsched.sim.gang_policies.similarity`)."""
    tokens = ["keep"] * no_cd + ["pack"] * packing + [variant] + ([exact] if exact else [])
    return "similarity:" + "-".join(tokens)


def cmd_similarity_sim(args: argparse.Namespace) -> int:
    from hetsched.cli.sim import shortcut
    from hetsched.instance.gavel_table import parse_cluster
    from hetsched.similarity.workload import similarity_workload

    inst = similarity_workload(args.seed, args.jobs, args.arrival_span, parse_cluster(args.cluster))
    policies = [policy_name(v, args.no_cd, args.packing, args.exact) for v in args.variants]
    shortcut(args, inst, policies, round_seconds=args.round_minutes * 60.0, restore_seconds=10.0)
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "similarity-sim": "compare the AppSci'24 model-similarity policy's variants on its "
    "workload (a shortcut for compare)",
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
    s.add_argument("--seed", type=seed_value, default=0)
    add_results_folder(s)
    s.set_defaults(func=cmd_similarity_sim)
