"""`hetsched sweep`: spec errors named, every run stored as it ends and validated, a killed sweep
resumes with nothing lost and nothing recomputed, the Dask executor gives the same rows."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import INSTANCES, MANIFEST

from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.sweep import load_spec, open_store, run_sweep

SMALL = ["small-01.json", "small-02.json", "small-05.json"]


def write_spec(
    tmp_path: Path, body: str = "", instances=SMALL, seeds=(0, 1), store="runs.jsonl"
) -> Path:
    files = ", ".join(json.dumps(str(INSTANCES / "small" / f)) for f in instances)
    text = f'''[sweep]
name = "t"
store = "{store}"
instances = [{files}]
seeds = {list(seeds)}
time_limit = 30
threads = 1
''' + (
        body
        or """
[[method]]
solve = "hare-sched"
solver = "cpsat"

[[method]]
heuristic = "hare-alg1"
order = "hare-interval-lp"

[[method]]
simulate = "hlas"
"""
    )
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def stored(spec_path: Path) -> list[dict]:
    spec = load_spec(spec_path)
    return list(open_store(spec.store).rows())


def test_every_run_is_stored_validated_and_ordered_against_the_optimum(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    report = run_sweep(spec, workers=2, progress=False)
    assert (report.total, report.already, report.ran) == (18, 0, 18)
    rows = stored(spec.path)
    assert len(rows) == 18 and len({r["key"] for r in rows}) == 18
    assert all(r["valid"] for r in rows)
    for r in rows:
        opt = MANIFEST[Path(r["instance"]).name]["optimum"]
        if r["method"].startswith("solve:"):
            assert r["status"] == "optimal" and r["objective"] == pytest.approx(opt)
        else:  # heuristics and simulated online policies are no better than the optimum
            assert r["objective"] >= opt - 1e-6


def test_rerun_recomputes_nothing(tmp_path):
    path = write_spec(tmp_path)
    run_sweep(load_spec(path), workers=2, progress=False)
    before = {r["key"]: r["finished_at"] for r in stored(path)}
    report = run_sweep(load_spec(path), workers=2, progress=False)
    assert (report.already, report.ran) == (18, 0)
    assert {r["key"]: r["finished_at"] for r in stored(path)} == before


def test_limit_then_resume(tmp_path):
    path = write_spec(tmp_path)
    first = run_sweep(load_spec(path), workers=1, progress=False, limit=5)
    assert first.ran == 5 and len(stored(path)) == 5
    second = run_sweep(load_spec(path), workers=2, progress=False)
    assert (second.already, second.ran) == (5, 13) and len(stored(path)) == 18


def _start_fifo_sweep(tmp_path: Path, seeds: int, workers: int, **popen):
    """(spec, store, process): ``hetsched sweep`` of fifo over ``seeds`` Philly windows, started in the background."""
    path = tmp_path / "spec.toml"
    path.write_text(
        f'[sweep]\nstore = "runs.jsonl"\nworkloads = ["philly"]\nseeds = {list(range(seeds))}\n'
        '[[method]]\nsimulate = "fifo"\n'
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hetsched.cli",
            "sweep",
            str(path),
            "--workers",
            str(workers),
            "--no-progress",
        ],
        stdout=subprocess.DEVNULL,
        **popen,
    )
    return path, tmp_path / "runs.jsonl", proc


def _wait_for_rows(proc, db: Path, rows: int, each=lambda: None, seconds: float = 120) -> None:
    """Poll the sweep's store until it holds ``rows`` results, the sweep ends or time runs out."""
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        each()
        if db.exists() and db.read_bytes().count(b"\n") >= rows:
            return


def test_a_killed_sweep_resumes_with_nothing_lost(tmp_path):
    # slow enough to be killed midway: 6 seeded Philly windows simulated one after another
    path, db, proc = _start_fifo_sweep(
        tmp_path, seeds=6, workers=1, start_new_session=True, stderr=subprocess.DEVNULL
    )
    _wait_for_rows(proc, db, 2)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker, without warning
    proc.wait()
    kept = {r["key"]: r for r in stored(path)}
    assert 2 <= len(kept) < 6  # killed midway
    report = run_sweep(load_spec(path), workers=2, progress=False)
    assert report.already == len(kept) and report.already + report.ran == 6
    after = {r["key"]: r for r in stored(path)}
    assert len(after) == 6 and all(
        after[k]["finished_at"] == r["finished_at"] for k, r in kept.items()
    )
    assert all(r["valid"] and r["status"] == "done" for r in after.values())


def test_dask_executor_matches_local(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = write_spec(tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path)
    run_sweep(load_spec(local), workers=2, progress=False)
    remote = write_spec(tmp_path / "b" if (tmp_path / "b").mkdir() is None else tmp_path)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        report = run_sweep(
            load_spec(remote), executor="dask", scheduler=cluster.scheduler_address, progress=False
        )
    assert report.ran == 18
    a = {r["key"]: (r["status"], r["objective"], r["valid"]) for r in stored(local)}
    b = {r["key"]: (r["status"], r["objective"], r["valid"]) for r in stored(remote)}
    assert a == b  # same keys (the key does not depend on the executor), same results


@pytest.mark.parametrize(
    "body, where",
    [
        ("[[method]]\nsolve = 'no-such-model'\n", "method[0].solve"),
        ("[[method]]\nsolve = 'hare-sched'\nsolver = 'nosolver'\n", "method[0].solver"),
        ("[[method]]\nsimulate = 'no-policy'\n", "method[0].simulate"),
        ("[[method]]\nsimulate = 'fifo'\nconvention = 'gavle'\n", "convention must be one of"),
        (
            "[[method]]\nsimulate = 'fifo'\nround_seconds = -1\n",
            "round_seconds must be a number > 0",
        ),
        ("[[method]]\nsimulate = 'fifo'\nrestore_seconds = 'x'\n", "restore_seconds must be"),
        ("[[method]]\nheuristic = 'hare-alg1'\ncolour = 'red'\n", "method[0].colour"),
        ("[[method]]\nsolve = 'hare-sched'\nheuristic = 'hare-alg1'\n", "method[0]"),
        ("", "method"),
    ],
)
def test_bad_methods_are_named(tmp_path, body, where):
    path = write_spec(tmp_path, body=body or "\n")
    with pytest.raises(InputError) as e:
        load_spec(path)
    assert where in str(e.value)


def test_bad_sweep_tables_are_named(tmp_path, capsys):
    cases = {
        "no_sweep.toml": ("[[method]]\nsolve='hare-sched'\n", "sweep"),
        "bad_glob.toml": (
            "[sweep]\ninstances=['nothing-*.json']\n[[method]]\nsolve='hare-sched'\n",
            "sweep.instances[0]",
        ),
        "bad_seeds.toml": (
            "[sweep]\ninstances=[]\nworkloads=['philly']\nseeds='0'\n[[method]]\nsimulate='hlas'\n",
            "sweep.seeds",
        ),
        "bad_limit.toml": (
            "[sweep]\nworkloads=['philly']\ntime_limit=-1\n[[method]]\nsimulate='hlas'\n",
            "sweep.time_limit",
        ),
        "not_toml.toml": ("[sweep\n", "not valid TOML"),
        "infinite_limit.toml": (  # TOML reads 1e309 as inf
            "[sweep]\nworkloads=['philly']\ntime_limit=1e309\n[[method]]\nsimulate='hlas'\n",
            "sweep.time_limit: must be > 0 and finite",
        ),
        "empty_store.toml": (
            "[sweep]\nstore=''\nworkloads=['philly']\n[[method]]\nsimulate='hlas'\n",
            "sweep.store: must name a file",
        ),
        "store_is_a_folder.toml": (
            "[sweep]\nstore='.'\nworkloads=['philly']\n[[method]]\nsimulate='hlas'\n",
            "sweep.store: must name a file",
        ),
        "store_cannot_be_made.toml": (  # its folder would sit under a file
            "[sweep]\nstore='no_sweep.toml/runs.jsonl'\nworkloads=['philly']\n"
            "[[method]]\nsimulate='hlas'\n",
            "sweep.store: cannot write",
        ),
    }
    for name, (text, where) in cases.items():
        p = tmp_path / name
        p.write_text(text)
        assert main(["sweep", str(p)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and name in err and where in err, err


def test_sweep_cli_json(tmp_path, capsys):
    path = write_spec(tmp_path, instances=SMALL[:1], seeds=(0,))
    assert main(["sweep", str(path), "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (
        out["total"] == 3
        and out["ran"] == 3
        and set(out["methods"])
        == {
            'solve:hare-sched[solver="cpsat"]',
            'heuristic:hare-alg1[order="hare-interval-lp"]',
            "simulate:hlas",
        }
    )


def test_the_shipped_example_spec_is_valid():
    spec = load_spec(Path(__file__).resolve().parents[2] / "examples" / "sweep-small.toml")
    assert len(spec.instances) == 5 and len(spec.methods) == 6 and len(spec.tasks()) == 60


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (from /proc/*/stat)."""
    out: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the workers")
def test_sigterm_stops_every_worker_and_keeps_what_is_stored(tmp_path):
    path, db, proc = _start_fifo_sweep(
        tmp_path, seeds=8, workers=2, stderr=subprocess.PIPE, text=True
    )
    workers: set[int] = set()
    _wait_for_rows(proc, db, 1, each=lambda: workers.update(_children(proc.pid)))
    assert proc.poll() is None, "the sweep ended before it could be stopped"
    workers |= _children(proc.pid)
    assert workers
    proc.send_signal(signal.SIGTERM)  # the main process only, as `kill PID` does
    assert proc.wait(timeout=60) == 143
    assert "terminated" in proc.stderr.read()
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers), "a worker outlived the sweep"
    kept = stored(
        path
    )  # what was stored before the signal is intact (resuming it: the killed-sweep test)
    assert 1 <= len(kept) < 8 and all(r["valid"] and r["status"] == "done" for r in kept)


def test_a_store_that_is_not_a_run_store_is_bad_input(tmp_path, capsys):
    (tmp_path / "runs.jsonl").write_text("not a run store\n")
    path = tmp_path / "spec.toml"
    path.write_text(
        '[sweep]\nstore = "runs.jsonl"\nworkloads = ["philly"]\nseeds = [0]\n[[method]]\nsimulate = "fifo"\n'
    )
    assert main(["sweep", str(path), "--no-progress"]) == 2
    assert (
        "runs.jsonl: line 1: not a JSON object: not a hetsched run store" in capsys.readouterr().err
    )


def test_a_simulate_method_takes_the_engine_convention(tmp_path):
    """sweep passes ``convention`` to run_policy: under Gavel's convention the gang engine ends a
    round when its last job stops, so the Philly window's result differs from ours."""
    rows = {}
    for conv in ("hetsched", "gavel"):
        path = tmp_path / f"{conv}.toml"
        path.write_text(
            f'[sweep]\nstore = "{conv}.jsonl"\nworkloads = ["philly"]\nseeds = [0]\n'
            f'[[method]]\nsimulate = "gavel"\nconvention = "{conv}"\n'
        )
        report = run_sweep(load_spec(path), progress=False)
        assert report.ran == 1
        (row,) = stored(path)
        assert row["valid"] and row["payload"]["convention"] == conv
        rows[conv] = row["objective"]
    assert rows["hetsched"] != rows["gavel"]
