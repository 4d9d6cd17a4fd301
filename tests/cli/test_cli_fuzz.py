"""Hostile files through the whole CLI (issue 20, item 6; the loader alone: test_instance_fuzz).

Random mutations of valid instances and of a valid solution (types, signs, magnitudes up to
1e308, NaN, missing and duplicate fields, huge counts) go through ``solve``, ``heuristic``,
``simulate``, ``allocate`` and ``validate`` in-process. Each ends with exit 0, 1 or 2: never 3
(an internal error), a traceback, a run far past its time limit, or exit 0 with a non-finite
number in its JSON; exit 2 is one line on stderr."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import BASES, HOSTILE, json_paths, mutated

from hetsched.cli import main
from hetsched.core.resources import shipped

TIME_LIMIT = 2.0
# far past a 2 s limit on a tiny instance: model build, validation and interpreter overhead
# included; CPU seconds of this process (every thread), so a loaded machine does not count
SLACK_SECONDS = 60.0


def _run(argv: list[str]) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    t0 = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue(), time.process_time() - t0


def _check(argv: list[str], json_out: bool = True) -> int:
    code, out, err, seconds = _run(argv)
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    assert seconds < SLACK_SECONDS, (argv, seconds)
    if code == 2:
        assert err.startswith("hetsched: error:") and err.count("\n") == 1, (argv, err)
    if code == 0 and json_out:
        for line in out.splitlines():
            record = json.loads(line)  # standard JSON: no NaN or Infinity tokens
            assert "non_finite" not in record, (argv, record["non_finite"])
    return code


def _write(tmp: Path, name: str, doc) -> str:
    path = tmp / name
    path.write_text(json.dumps(doc))
    return str(path)


def _hare_commands(path: str, tasks: int) -> list[list[str]]:
    cmds = [
        ["solve", path, "--time-limit", str(TIME_LIMIT), "--json"],
        ["heuristic", path, "--order", "arrival", "--json"],
    ]
    if tasks <= 20_000:  # the simulator has no time limit: past this it is a long run, not a hang
        cmds.append(["simulate", path, "--policy", "fifo", "--json"])
    return cmds


def _gang_commands(path: str) -> list[list[str]]:
    return [
        ["allocate", path, "--policy", "makespan", "--time-limit", str(TIME_LIMIT), "--json"],
        [
            "allocate",
            path,
            "--policy",
            "max-min-fairness",
            "--time-limit",
            str(TIME_LIMIT),
            "--json",
        ],
        ["simulate", path, "--policy", "tiresias", "--json"],
    ]


# numbers the loader takes (most of the generic mutations are refused at load and never reach a
# command): extreme but legal magnitudes, so that models, simulators and LPs see them
LEGAL_EXTREMES = st.one_of(
    st.sampled_from([0, 0.0, 1e-12, 1e-6, 0.5, 1, 2, 1e6, 1e12, 1e15, 10**6, 999_999]),
    st.floats(0, 1e15, allow_nan=False, allow_infinity=False),
)


@st.composite
def mutated_numbers(draw):
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    numeric = [p for p in json_paths(doc) if p and p[0] == "jobs"]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(numeric))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent[path[-1]], (int, float)) and not isinstance(parent[path[-1]], bool):
            parent[path[-1]] = draw(LEGAL_EXTREMES)
    return doc


def _tasks(doc) -> int:
    try:
        return sum(int(j["rounds"]) * int(j["tasks_per_round"]) for j in doc["jobs"])
    except Exception:  # not an instance the loader takes; the command refuses it
        return 0


@given(st.one_of(mutated(), mutated_numbers()))
def test_a_mutated_instance_through_every_command(tmp_path_factory, doc):
    tmp = tmp_path_factory.mktemp("fuzz")
    path = _write(tmp, "fuzz.json", doc)
    gang = (
        any("requested_workers" in j for j in doc.get("jobs", []) if isinstance(j, dict))
        if isinstance(doc.get("jobs"), list)
        else False
    )
    for argv in _gang_commands(path) if gang else _hare_commands(path, _tasks(doc)):
        _check(argv)


@pytest.fixture(scope="module")
def fig9_solution(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("sol") / "fig9.json"
    assert main(["solve", "hare_fig9", "--solver", "cpsat", "--out", str(out)]) == 0
    return json.loads(out.read_text())


@st.composite
def mutated_solution(draw, base: dict):
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        rows = doc.get("assignments")
        if not isinstance(rows, list) or not rows:
            break
        i = draw(st.integers(0, len(rows) - 1))
        if not isinstance(rows[i], dict) or not rows[i]:
            break
        key = draw(st.sampled_from(sorted(rows[i])))
        action = draw(st.sampled_from(["replace", "delete", "duplicate", "top"]))
        if action == "replace":
            rows[i][key] = draw(HOSTILE)
        elif action == "delete":
            del rows[i][key]
        elif action == "duplicate":
            rows.append(copy.deepcopy(rows[i]))
        else:
            doc[draw(st.sampled_from(["format", "instance", "instance_hash", "assignments"]))] = (
                draw(HOSTILE)
            )
    return doc


@given(st.data())
def test_a_mutated_solution_is_validated_or_refused(tmp_path_factory, fig9_solution, data):
    doc = data.draw(mutated_solution(fig9_solution))
    tmp = tmp_path_factory.mktemp("fuzz")
    path = _write(tmp, "solution.json", doc)
    instance = str(shipped("instances", "paper", "hare_fig9.json"))
    code = _check(["validate", instance, path, "--json"])
    if doc == fig9_solution:
        assert code == 0


def test_the_bases_pass_every_command(tmp_path):
    """The unmutated files go through the same commands with exit 0 (the fuzz starts from working input)."""
    for i, doc in enumerate(BASES):
        path = _write(tmp_path, f"base{i}.json", doc)
        gang = any("requested_workers" in j for j in doc["jobs"])
        for argv in _gang_commands(path) if gang else _hare_commands(path, _tasks(doc)):
            assert _check(argv) == 0, argv


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "gavel-poisson", "--policy", "fifo", "--jobs", "1000000000"],
        ["compare", "philly", "--policies", "fifo", "--jobs", "1000000000"],
        ["place-sim", "--jobs", "1000000000"],
        ["place-sim", "--servers", "1000000"],
        ["similarity-sim", "--jobs", "1000000000"],
        ["generate", "hare-table2", "--seed", "0", "--jobs", "1000000000"],
        ["generate", "pm-wct", "--seed", "0", "--jobs", "10", "--gpus", "1e9"],
        ["solve", "hare_fig9", "--time-limit", "inf"],
        ["nosuch-command"],
    ],
)
def test_hostile_counts_on_the_command_line_are_one_line_and_exit_2(argv):
    """A generator asked for 10^9 jobs filled 8 GB in 40 s before anything could refuse it; now
    the argument is refused as it is parsed (issue 20, item 2)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert err.getvalue().count("\n") == 1 and "error:" in err.getvalue()


@pytest.mark.parametrize(
    "argv, names",
    [
        (["simulate", "similarity-jobs:abc", "--policy", "similarity"], "MINUTES"),
        (["simulate", "harmony-jobs:foo", "--policy", "yarn-cs"], "ARRIVALS"),
        (["simulate", "philly", "--policy", "similarity:gpu_ngpu"], "$.metadata.gang.resize"),
        (["simulate", "harmony-jobs", "--policy", "harmony:tetris:sideways"], "ORDER"),
        (["simulate", "harmony-jobs", "--policy", "similarity:gpu-keep-gpu"], "TOKENS"),
        (["simulate", "harmony-jobs", "--jobs", "3", "--policy", "similarity"], "model.name"),
    ],
)
def test_the_shared_simulators_bad_workloads_and_policies_are_one_line(argv, names, capsys):
    """The workloads and policy arguments of the one gang simulator (issue 19, item 1): a wrong
    arrival span or pattern, a variant the workload does not allow, a model a policy has no data
    for: one line naming the field, exit 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and names in err


# what a user may type where a number, a path or an option goes
NUMBERS = st.one_of(
    st.sampled_from(["-1", "0", "1", "2", "1e9", "nan", "inf", "-inf", "0x10", "", "1.5", "٣"]),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.text(max_size=8),
)
PATHS = st.one_of(
    st.sampled_from(
        ["", ".", "/", "/dev/null", "/nonexistent/x.json", "hare_fig9", "small/small-07"]
    ),
    st.text(max_size=12),
)
OPTIONS = st.builds(
    lambda k, v: f"{k}={v}",
    st.sampled_from(["place_all", "groups", "subsets", "nosuch", ""]),
    st.one_of(NUMBERS, st.sampled_from(["true", "false", "True", "null", "[]", "{}", '"x"'])),
)


@st.composite
def command_lines(draw):
    """A command with one of its arguments replaced by something a user might type."""
    kind = draw(st.sampled_from(["generate", "solve", "validate", "show", "simulate", "option"]))
    if kind == "generate":
        flag = draw(st.sampled_from(["--seed", "--jobs", "--gpus"]))
        argv = ["generate", "small", "--seed", "1", flag, draw(NUMBERS)]
    elif kind == "solve":
        flag = draw(st.sampled_from(["--seed", "--threads", "--time-limit", "--gap", "--groups"]))
        argv = ["solve", "hare_fig9", "--solver", "cpsat", "--time-limit", "2", flag, draw(NUMBERS)]
    elif kind == "validate":
        argv = ["validate", draw(PATHS), draw(PATHS)]
    elif kind == "show":
        argv = ["show", draw(PATHS)]
    elif kind == "simulate":
        argv = ["simulate", draw(PATHS), "--policy", "fifo", "--seed", draw(NUMBERS)]
    else:
        argv = ["solve", "small-2s-c", "--model", "harmony-placement", "--option", draw(OPTIONS)]
    return [a for a in argv if "\x00" not in a]


@given(command_lines())
def test_fuzzed_arguments_never_end_in_an_internal_error(argv):
    """Numbers, paths and options a user may type: exit 0, 1 or 2 (one line), never 3."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as stop:  # the parser's refusal
        code = stop.code
    assert code in (0, 1, 2), (argv, code, err.getvalue())
    if code == 2:
        assert err.getvalue().count("\n") == 1, (argv, err.getvalue())
