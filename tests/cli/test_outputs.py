"""Files a user can trust (issue 40): every command that writes an output refuses, before any
work, an output that is one of its inputs (by inode: under another name too), lies in a missing
folder, is read-only or has a suffix its writer cannot write; the input stays byte for byte.
Outputs are written whole or not at all."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.cli import build_parser, main
from hetsched.cli.args import IMAGE_SUFFIXES
from hetsched.core.errors import InputError
from hetsched.core.files import atomic_path, check_output, write_text_atomic
from hetsched.core.resources import shipped

INSTANCE = shipped("instances", "paper", "hare_fig9.json")
TRACE = shipped("data", "gavel", "traces", "physical_cluster_minimize_makespan.trace")

#: every command with an output: (argv with INPUT and OUT placeholders, the output's kind, the
#: option). INPUT is a copy of a shipped file the command reads (none: the command reads none).
COMMANDS = [
    (["solve", "INPUT", "--out", "OUT"], "file", "--out", "instance"),
    (["heuristic", "INPUT", "--order", "arrival", "--out", "OUT"], "file", "--out", "instance"),
    (["export", "INPUT", "--out", "OUT"], "file", "--out", "instance"),
    (["show", "INPUT", "--gantt", "OUT"], "file", "--gantt", "solution"),
    (["show", "INPUT", "--hist", "OUT"], "file", "--hist", "solution"),
    (["certify", "INPUT", "--manifest", "OUT"], "file", "--manifest", "instance"),
    (
        ["import-gavel", "INPUT", "--cluster", "v100=1", "--out", "OUT"],
        "file",
        "--out",
        "trace",
    ),
    (["generate", "small", "--seed", "1", "--out", "OUT"], "file", "--out", None),
    (["schema", "--out", "OUT"], "file", "--out", None),
    (["bench", "exact", "--quick", "--out", "OUT"], "file", "--out", None),
    (["simulate", "INPUT", "--policy", "fifo", "--out", "OUT"], "dir", "--out", "instance"),
    (["compare", "INPUT", "--policies", "fifo", "--out", "OUT"], "dir", "--out", "instance"),
    (["audit", "packing", "--trials", "1", "--out", "OUT"], "dir", "--out", None),
    (["similarity-sim", "--jobs", "2", "--out", "OUT"], "dir", "--out", None),
    (["place-sim", "--policies", "tetris", "--out", "OUT"], "dir", "--out", None),
    (["docs", "--out", "OUT"], "dir", "--out", None),
]
BAD = ("the input", "the input by another name", "a missing folder", "a read-only file")


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


def _solution(tmp: Path) -> Path:
    path = tmp / "solution.json"
    code, err = _run(["solve", str(INSTANCE), "--solver", "cpsat", "--out", str(path)])
    assert code == 0 and path.exists(), err
    return path


def test_every_command_that_writes_declares_its_outputs():
    """The table above covers every option the parser declares as an output."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    declared = {
        (name, out.option)
        for name, p in sub.choices.items()
        for out in (p.get_default("outputs") or ())
    }
    assert declared == {(argv[0], option) for argv, _, option, _ in COMMANDS}


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(COMMANDS), bad=st.sampled_from(BAD))
def test_a_bad_output_is_refused_before_any_work_and_the_input_is_unchanged(
    tmp_path_factory, case, bad
):
    argv, kind, option, reads = case
    tmp = tmp_path_factory.mktemp("out")
    source = {
        "instance": INSTANCE,
        "trace": TRACE,
        "solution": None,
        None: None,
    }[reads]
    if reads == "solution":
        source = _solution(tmp_path_factory.mktemp("sol"))
    inp = None
    if source is not None:
        inp = tmp / f"input{source.suffix}"
        shutil.copyfile(source, inp)
    if bad.startswith("the input") and inp is None:
        bad = "a read-only file"  # a command that reads no file: another bad output
    if bad == "a missing folder" and kind == "dir":
        bad = "a read-only file"  # an output folder is made with its parents (mkdir -p)
    ro = tmp / ("read-only.png" if option in ("--gantt", "--hist") else "read-only.json")
    ro.write_text("keep me\n")
    ro.chmod(0o444)
    out = {
        "the input": inp,
        "the input by another name": tmp / "link.json",
        "a missing folder": tmp / "missing" / ("x.png" if option in ("--gantt", "--hist") else "x"),
        "a read-only file": ro,
    }[bad]
    if bad == "the input by another name":
        os.link(inp, out)  # a hard link: another name, the same inode
    before = inp.read_bytes() if inp is not None else None
    line = [str(inp) if a == "INPUT" else str(out) if a == "OUT" else a for a in argv]
    code, err = _run(line)
    assert code == 2, (line, code, err)
    assert err.startswith(f"hetsched: error: {option} ") and err.count("\n") == 1, err
    if inp is not None:
        assert inp.read_bytes() == before
    assert ro.read_text() == "keep me\n"
    assert not (tmp / "missing").exists()


def test_an_image_suffix_the_plotter_cannot_write_is_refused(tmp_path):
    code, err = _run(["show", str(_solution(tmp_path)), "--gantt", str(tmp_path / "g.xyz")])
    assert code == 2 and "cannot write a '.xyz' file" in err


def test_the_image_suffixes_are_matplotlib_writers():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    supported = Figure().canvas.get_supported_filetypes()
    assert {s.lstrip(".") for s in IMAGE_SUFFIXES} <= set(supported)


def test_solve_writes_its_solution_and_reruns_replace_it_whole(tmp_path):
    out = tmp_path / "sol.json"
    out.write_text("old\n")
    code, err = _run(["solve", str(INSTANCE), "--solver", "cpsat", "--out", str(out)])
    assert code == 0, err
    assert out.read_text().startswith("{") and not list(tmp_path.glob(".*"))


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "a.json"
    target.write_text("old")
    target.chmod(0o640)
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("stopped")
    assert target.read_text() == "old" and sorted(tmp_path.iterdir()) == [target]
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) == "0o640"


def test_check_output_cases(tmp_path):
    inp = tmp_path / "in.json"
    inp.write_text("{}")
    (tmp_path / "sym.json").symlink_to(inp)
    cases = {
        str(inp): "is the input",
        str(tmp_path / "sym.json"): "is the input",
        str(tmp_path): "is a directory",
        str(tmp_path / "no" / "x.json"): "does not exist",
    }
    for path, reason in cases.items():
        with pytest.raises(InputError, match=reason):
            check_output(path, "--out", inputs=[str(inp)])
    check_output(tmp_path / "fresh.json", "--out", inputs=[str(inp)])  # fine: nothing raised
    with pytest.raises(InputError, match="not a directory"):
        check_output(inp, "--out", kind="dir")
    check_output(tmp_path / "new-dir", "--out", kind="dir")
    check_output(tmp_path / "a" / "b", "--out", kind="dir")  # made with its parents
    with pytest.raises(InputError, match="is not a writable folder"):
        check_output(inp / "a" / "b", "--out", kind="dir")  # below a file: cannot be made
