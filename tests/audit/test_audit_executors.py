"""Audits through the sweep's executors (issue 22 item 5): the trial log is the same for a seed
and a batch size whatever the executor and the number of workers, and it resumes."""

import os
import signal
import subprocess
import sys
import time

import pytest
from support import ctrl_c_as_in_a_terminal

from hetsched.audit.claims import find_claim
from hetsched.audit.engine import run_audit
from hetsched.core.runstore import RunStore

CLAIM = find_claim("hadar-competitive")


def log_of(report) -> list[dict]:
    """The trials of an audit's log (its run store: a settings line, then one trial a line)."""
    return list(RunStore(report["log"], ("trial",)).rows())


def audit(tmp_path, name, **kw):
    return run_audit(CLAIM, trials=12, seed=3, out_dir=tmp_path / name, **kw)


def test_serial_batch_one_is_the_sequential_search_and_batches_are_worker_independent(tmp_path):
    serial = audit(tmp_path, "serial", batch=4)
    pooled = audit(tmp_path, "pool", batch=4, executor="local", workers=2)
    assert log_of(serial) == log_of(pooled)
    assert [r["trial"] for r in log_of(pooled)] == list(range(12))
    assert serial["worst_ratio"] == pooled["worst_ratio"]
    # batch 1 mutates the worst so far: the guided half of the search can differ from batch 4
    one = audit(tmp_path, "one")
    assert [r["instance"] for r in log_of(one)[:6]] == [r["instance"] for r in log_of(serial)[:6]]


def test_a_stopped_audit_resumes_to_the_same_log(tmp_path):
    full = audit(tmp_path, "full", batch=3)

    class Stop(Exception):
        pass

    def stop_after_7(line: str) -> None:
        if line.startswith("trial 7/"):
            raise Stop

    with pytest.raises(Stop):
        audit(tmp_path, "part", batch=3, progress=stop_after_7)
    assert len(log_of({"log": tmp_path / "part" / "hadar-competitive-ci-s3" / "trials.jsonl"})) == 7
    resumed = audit(tmp_path, "part", batch=3)
    assert log_of(resumed) == log_of(full)


def test_dask_executor_gives_the_same_log(tmp_path):
    distributed = pytest.importorskip("distributed")
    serial = audit(tmp_path, "serial", batch=4)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = audit(
            tmp_path, "dask", batch=4, executor="dask", scheduler=cluster.scheduler_address
        )
    assert log_of(remote) == log_of(serial)


def test_bad_executor_and_batch_are_refused(tmp_path):
    from hetsched.core.errors import HetschedError, InputError

    with pytest.raises(HetschedError, match="unknown executor"):
        audit(tmp_path, "x", executor="cloud")
    with pytest.raises(InputError, match="--batch"):
        audit(tmp_path, "y", batch=0)


def test_every_claim_can_be_sent_to_a_worker():
    """The pools pickle the claim with each trial: no lambda may hide in it (regression:
    hare-alg1-subsets with --executor local stopped with a PicklingError)."""
    import pickle

    from hetsched.audit.claims import claims

    for claim in claims().values():
        assert pickle.loads(pickle.dumps(claim)).name == claim.name


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_whole_process_group_stops_the_pool_without_a_hang(tmp_path, sig):
    """A batch scheduler's SIGTERM, or Ctrl-C, reaches the workers too. multiprocessing.Pool hung
    when a worker died holding its queue's lock; the pool now stops at once (143 or 130) and
    leaves no worker behind."""
    argv = ["audit", "hadar-competitive", "--profile", "deep", "--batch", "8"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hetsched", *argv, "--executor", "local", "--workers", "2"]
        + ["--out", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    try:
        for line in proc.stderr:  # the workers are at work once trials come back (no clock)
            if line.startswith("trial 2/"):
                break
        children = _children(proc.pid)
        assert children, "no worker processes"
        os.killpg(proc.pid, sig)
        assert proc.wait(timeout=120) == (143 if sig == signal.SIGTERM else 130)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    # every child is gone (reaped, or a zombie of the dead parent) once it has run its exit: the
    # workers are killed, multiprocessing's resource tracker ends when its parent's pipe closes;
    # a minute is a detector of a child left running, not a measure of speed
    for pid in children:
        for _ in range(600):
            if not os.path.exists(f"/proc/{pid}") or "Z" in _state(pid):
                break
            time.sleep(0.1)
        assert not os.path.exists(f"/proc/{pid}") or "Z" in _state(pid), pid


def _children(pid: int) -> list[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    return [int(x) for x in open(path).read().split()] if os.path.exists(path) else []


def _state(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
