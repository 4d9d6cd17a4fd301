"""Every argument is checked before any work (issue 40): seeds, thread counts, the flags of
``--option``, the nesting of a JSON file; a run store never mixes two settings or two writers."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.core.runstore import RunStore


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["generate", "small", "--seed", "-1"], "--seed: must be from 0 to 2**64 - 1"),
        (["generate", "small", "--seed", str(2**64)], "--seed: must be from 0 to 2**64 - 1"),
        (["solve", "hare_fig9", "--threads", "100000"], "--threads: must be from 1 to"),
        (["solve", "hare_fig9", "--threads", "0"], "--threads: must be from 1 to"),
        (["simulate", "hare_fig9", "--policy", "fifo", "--seed", "x"], "not a whole number"),
    ],
)
def test_a_bad_number_is_an_argument_error(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and says in capsys.readouterr().err


def test_the_largest_seed_runs_and_reaches_the_solvers_in_their_range():
    code, out, err = _run(["solve", "hare_fig9", "--solver", "cpsat", "--seed", str(2**64 - 1)])
    assert code == 0 and "optimal" in out, err
    code, out, err = _run(["generate", "small", "--seed", str(2**64 - 1)])
    assert code == 0 and json.loads(out)["jobs"]


@pytest.mark.parametrize("value", ["False", "maybe", "2", '"yes"'])
def test_a_flag_option_takes_true_false_1_or_0_only(value):
    argv = ["solve", "small-2s-c", "--model", "harmony-placement", "--option", f"place_all={value}"]
    code, _, err = _run(argv)
    assert code == 2 and "place_all of model 'harmony-placement' must be true or false" in err


@pytest.mark.parametrize("value", ["true", "false", "1", "0"])
def test_a_flag_option_reads_true_false_1_and_0(value):
    argv = ["solve", "small-2s-c", "--model", "harmony-placement", "--option", f"place_all={value}"]
    assert _run(argv)[0] == 0


def test_a_json_file_nested_too_deep_is_bad_input_not_a_crash(tmp_path):
    for depth in (150, 100_000):
        path = tmp_path / f"deep{depth}.json"
        path.write_text("[" * depth + "]" * depth)
        code, _, err = _run(["solve", str(path)])
        assert code == 2 and "nested deeper than 100 levels" in err and err.count("\n") == 1


def test_a_store_refuses_runs_of_other_settings_and_names_the_setting(tmp_path):
    path = tmp_path / "runs.jsonl"
    store = RunStore(path, ("k",), settings={"batch": 1})
    store.add({"k": 1, "v": "a"})
    assert RunStore(path, ("k",), settings={"batch": 1}).get((1,))["v"] == "a"  # resumes
    with pytest.raises(InputError, match="made with batch = 1, not 2: rerun with the stored"):
        RunStore(path, ("k",), settings={"batch": 2})
    assert [r["v"] for r in RunStore(path, ("k",)).rows()] == ["a"]  # the settings line is no run


def test_a_store_from_before_settings_keeps_its_runs_and_takes_them(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"k": 1}\n{"k": 2}\n')
    store = RunStore(path, ("k",), settings={"time_limit": 5})
    assert len(store) == 2 and path.read_text().startswith('{"run_store_settings"')
    with pytest.raises(InputError, match="time_limit = 5, not 6"):
        RunStore(path, ("k",), settings={"time_limit": 6})


def test_a_second_writer_is_refused_while_the_first_holds_the_store(tmp_path):
    path = tmp_path / "runs.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from hetsched.core.runstore import RunStore\n"
            f"with RunStore({str(path)!r}, ('k',)).writer():\n"
            "    print('held', flush=True)\n"
            "    sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"  # no clock: it says when it holds
        with pytest.raises(InputError, match="another process is filling this run store"):
            with RunStore(path, ("k",)).writer():
                pass
    finally:
        holder.communicate("\n", timeout=60)
    with RunStore(path, ("k",)).writer() as store:  # released: the next writer gets it
        store.add({"k": 1})
    assert len(RunStore(path, ("k",))) == 1


def test_a_writer_reads_what_was_stored_before_it_got_the_lock(tmp_path):
    path = tmp_path / "runs.jsonl"
    early = RunStore(path, ("k",))  # opened while the store is still empty
    with RunStore(path, ("k",)).writer() as other:
        other.add({"k": 1})
    with early.writer():
        assert (1,) in early


def test_an_audit_store_of_other_settings_is_refused_and_the_same_ones_resume(tmp_path):
    """The trial count sets where the random trials end, so 3 trials are not the first 3 of 12:
    a store of 12 is never summarized as 3 (issue 40: "5 of 5 trials" pointing at trial 32)."""
    first = _run(["audit", "hare-alg1", "--trials", "12", "--out", str(tmp_path), "--json"])
    again = _run(["audit", "hare-alg1", "--trials", "12", "--out", str(tmp_path), "--json"])
    assert first[0] == again[0] == 0 and json.loads(first[1]) == json.loads(again[1])
    code, _, err = _run(["audit", "hare-alg1", "--trials", "3", "--out", str(tmp_path)])
    assert code == 2 and "made with trials = 12, not 3" in err


def test_an_audit_store_of_another_batch_is_refused(tmp_path):
    assert _run(["audit", "packing", "--trials", "2", "--out", str(tmp_path)])[0] == 0
    code, _, err = _run(
        ["audit", "packing", "--trials", "2", "--batch", "2", "--out", str(tmp_path)]
    )
    assert code == 2 and "made with batch = 1, not 2" in err


def test_sigterm_exits_143_and_says_the_output_was_not_written(tmp_path):
    inst, out = tmp_path / "ht.json", tmp_path / "ht.lp"
    argv = ["generate", "hare-table2", "--jobs", "20", "--gpus", "16", "--seed", "0"]
    assert _run([*argv, "--out", str(inst)])[0] == 0
    proc = subprocess.Popen(  # building a 5,697-task Pyomo model: Python at work for a while
        [sys.executable, "-m", "hetsched", "export", str(inst), "--out", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    line = proc.stderr.readline()  # the heartbeat: the command is at work (no clock here)
    assert "running" in line, line
    proc.terminate()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 143
    assert "terminated; nothing written to --out" in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["ht.json"]
