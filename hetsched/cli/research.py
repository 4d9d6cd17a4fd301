"""The researcher's commands: ``show`` (a result and its picture), ``export`` (a model as LP/MPS),
``sweep`` (instances x methods x seeds into a store) and ``solvers`` (what this machine can run).
Registered by :func:`hetsched.cli.build_parser`; errors are :class:`HetschedError` (exit 2)."""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from hetsched.cli.args import IMAGE_SUFFIXES, Output, declare_outputs, json_flag, positive
from hetsched.cli.common import EXIT_FAIL, EXIT_OK
from hetsched.core.jsonio import json_text


def cmd_show(args: argparse.Namespace) -> int:
    from hetsched.tools.show import show

    text, ok = show(args.file, instance=args.instance, gantt=args.gantt, hist=args.hist)
    print(text)
    return EXIT_OK if ok else EXIT_FAIL


def cmd_export(args: argparse.Namespace) -> int:
    from hetsched.exact.export import export_model
    from hetsched.instance.io import load_instance

    fmt = args.format or (Path(args.out).suffix.lstrip(".").lower() if args.out else "lp")
    out = args.out or f"{Path(args.instance).stem}-{args.model}.{fmt}"
    print(
        export_model(
            load_instance(args.instance), args.model, fmt, out, options={"groups": args.groups}
        )
    )
    return EXIT_OK


def cmd_solvers(args: argparse.Namespace) -> int:
    from hetsched.solvers import OPTIONAL, SOLVERS, available_solvers

    here = set(available_solvers())
    for name, backend in SOLVERS.items():
        need = f"needs {OPTIONAL[name].needs}" if name in OPTIONAL else "built in"
        print(
            f"{name:<8} {backend.model_kind:<6} {'available' if name in here else 'not found':<10} {need}"
        )
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    from hetsched.sweep.store import open_store
    from hetsched.sweep.tasks import load_spec, run_sweep

    spec = load_spec(args.spec)
    report = run_sweep(
        spec,
        executor=args.executor,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=not args.no_progress and not args.json,
        limit=args.limit,
    )
    keys = {t.key for t in spec.tasks()}
    rows = [r for r in open_store(spec.store).rows() if r["key"] in keys]
    summary = summarize(rows)
    if args.json:
        print(json_text({**report.to_dict(), "methods": summary}))
    else:
        print(
            f"{report.name}: {report.total} runs ({report.already} already in the store, {report.ran} run now) "
            f"-> {report.store}"
        )
        width = max([len("method"), *map(len, summary)])
        print(f"{'method':<{width}} {'runs':>5} {'valid':>6} {'mean objective':>16}  statuses")
        for label, s in summary.items():
            mean = "-" if s["mean_objective"] is None else f"{s['mean_objective']:.6g}"
            print(
                f"{label:<{width}} {s['runs']:>5} {s['valid']:>6} {mean:>16}  "
                + ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items()))
            )
    bad = sum(1 for r in rows if r["status"] in ("error", "invalid") or r["valid"] is False)
    return EXIT_FAIL if bad else EXIT_OK


def summarize(rows: list[dict]) -> dict[str, dict]:
    """Per method: runs, valid runs, mean objective over runs with one, status counts."""
    by = defaultdict(list)
    for r in rows:
        by[r["method"]].append(r)
    out = {}
    for label, rs in by.items():
        objs = [r["objective"] for r in rs if r["objective"] is not None]
        statuses: dict[str, int] = defaultdict(int)
        for r in rs:
            statuses[r["status"]] += 1
        out[label] = {
            "runs": len(rs),
            "valid": sum(1 for r in rs if r["valid"]),
            "mean_objective": sum(objs) / len(objs) if objs else None,
            "statuses": dict(statuses),
        }
    return out


def cmd_docs(args: argparse.Namespace) -> int:
    from hetsched.tools.docs import write_docs

    if args.out is None:
        from hetsched.core.resources import shipped_dir

        out = shipped_dir("docs")
    else:
        out = Path(args.out)
    stale = write_docs(out, args.build_parser, check=args.check)
    if args.check:
        for path in stale:
            print(f"stale: {path} (run `hetsched docs`)")
        return EXIT_FAIL if stale else EXIT_OK
    print("\n".join(f"wrote {p}" for p in stale) or "docs up to date")
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "show": "a solution (validated, per-GPU listing, --gantt) or an audit report (--hist)",
    "export": "write a Pyomo formulation of an instance as LP or MPS (any solver can read it)",
    "solvers": "the solvers and whether this machine has them",
    "sweep": "instances x methods x seeds from a TOML spec into a run store; resumable",
    "docs": "regenerate the generated pages of docs/ (cli, formulations, api, formats; --check: fail if stale)",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    positive_int = positive(int)
    sh = sub.add_parser("show", help=COMMANDS["show"])
    sh.add_argument(
        "file",
        help="a schedule (solve/heuristic --out, or solve --json output) or an audit report.json",
    )
    sh.add_argument(
        "--instance",
        default=None,
        help="the schedule's instance (default: the shipped one with its hash)",
    )
    sh.add_argument(
        "--gantt",
        default=None,
        metavar="PNG",
        help="draw the schedule: GPUs as rows, round barriers dashed",
    )
    sh.add_argument("--hist", default=None, metavar="PNG", help="draw an audit's ratio histograms")
    sh.set_defaults(func=cmd_show)
    declare_outputs(
        sh, Output("gantt", suffixes=IMAGE_SUFFIXES), Output("hist", suffixes=IMAGE_SUFFIXES)
    )

    from hetsched.exact.export import FORMATS

    ex = sub.add_parser(
        "export",
        help=COMMANDS["export"],
    )
    ex.add_argument("instance", help="instance JSON file")
    ex.add_argument(
        "--model", default="hare-sched", help="formulation (see `hetsched models`; Pyomo ones)"
    )
    ex.add_argument(
        "--format", choices=FORMATS, default=None, help="default: from --out's suffix, else lp"
    )
    ex.add_argument(
        "--out", default=None, help="file to write (default INSTANCE-MODEL.FORMAT here)"
    )
    ex.add_argument(
        "--groups",
        type=positive_int,
        default=None,
        metavar="U",
        help="gpu-grouping: number of groups",
    )
    ex.set_defaults(func=cmd_export)
    declare_outputs(ex, Output("out"))

    sv = sub.add_parser("solvers", help=COMMANDS["solvers"])
    sv.set_defaults(func=cmd_solvers)

    from hetsched.core.executors import EXECUTORS

    sw = sub.add_parser("sweep", help=COMMANDS["sweep"])
    sw.add_argument("spec", help="sweep spec (TOML; see hetsched.sweep.spec)")
    sw.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local process pool (default) or dask",
    )
    sw.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler address (with --executor dask)",
    )
    sw.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="local processes (default: cores)",
    )
    sw.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="run at most N missing runs now",
    )
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    json_flag(sw, "the counts and the summary per method")
    sw.set_defaults(func=cmd_sweep)

    dc = sub.add_parser("docs", help=COMMANDS["docs"])
    dc.add_argument(
        "--out", default=None, help="docs directory (default: the docs shipped with hetsched)"
    )
    dc.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a generated file is stale"
    )
    dc.set_defaults(func=cmd_docs)
    declare_outputs(dc, Output("out", "dir"))
