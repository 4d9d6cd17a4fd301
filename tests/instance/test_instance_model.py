"""The data model checks itself when it is made, whoever makes it (not only the file loader)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hetsched.core.errors import InputError
from hetsched.instance.io import load_instance
from hetsched.instance.model import Gpu, GpuType, Job, Server


def _job(**kw) -> Job:
    args = dict(
        id="J1",
        arrival=0.0,
        weight=1.0,
        rounds=2,
        tasks_per_round=1,
        train_time={"v100": 3.0},
        sync_time={"v100": 0.5},
    )
    return Job(**{**args, **kw})


@pytest.mark.parametrize(
    "change, message",
    [
        ({"weight": -1.0}, "job 'J1': $.weight: must be > 0 (got -1)"),
        ({"arrival": float("nan")}, "job 'J1': $.arrival: must be a finite number (got nan)"),
        ({"rounds": 2.5}, "job 'J1': $.rounds: must be a whole number (got 2.5)"),
        ({"tasks_per_round": 0}, "job 'J1': $.tasks_per_round: must be >= 1 (got 0)"),
        ({"train_time": {"v100": 0.0}}, "job 'J1': $.train_time.v100: must be > 0 (got 0)"),
        ({"sync_time": {"v100": 1e16}}, "$.sync_time.v100: must be <= 1e+15"),
        ({"id": ""}, "job '': $.id: must be a non-empty string"),
        ({"iterations_per_epoch": 1026.46}, "$.iterations_per_epoch: must be a whole number"),
    ],
)
def test_a_job_made_in_code_is_checked_like_one_read_from_a_file(change, message):
    with pytest.raises(InputError) as err:
        _job(**change)
    assert message in str(err.value)


def test_numpy_numbers_are_numbers():
    j = _job(rounds=np.int64(3), weight=np.float64(2.0), train_time={"v100": np.float32(1.5)})
    assert j.n_tasks == 3


def test_an_instance_made_or_edited_in_code_checks_ids_types_and_times():
    fig5 = load_instance("hare_fig5")
    with pytest.raises(InputError, match=r"\$\.jobs\[1\]\.id: duplicate job id"):
        replace(fig5, jobs=(fig5.jobs[0], fig5.jobs[0]))
    with pytest.raises(InputError, match=r"\$\.jobs\[0\]\.train_time: missing time for GPU type"):
        replace(fig5, jobs=(replace(fig5.jobs[0], train_time={}),))
    with pytest.raises(InputError, match=r"train_time_per_gpu\.G9: unknown GPU id 'G9'"):
        replace(fig5, jobs=(replace(fig5.jobs[0], train_time_per_gpu={"G9": 1.0}),))
    with pytest.raises(InputError, match=r"\$\.jobs: must have at least 1 item"):
        replace(fig5, jobs=())
    gpu = fig5.gpus[0]
    twice = fig5.cluster.servers + fig5.cluster.servers
    with pytest.raises(InputError, match=r"servers\[1\]\.id: duplicate server id 'server0'"):
        replace(fig5, cluster=replace(fig5.cluster, servers=twice))
    other = Server("other", tuple(replace(g, server="other") for g in fig5.cluster.servers[0].gpus))
    with pytest.raises(InputError, match=r"gpus\[0\]\.id: duplicate GPU id 'GPU1'"):
        replace(fig5, cluster=replace(fig5.cluster, servers=(fig5.cluster.servers[0], other)))
    with pytest.raises(InputError, match=r"unknown GPU type 'h100'"):
        replace(
            fig5, cluster=replace(fig5.cluster, servers=(Server("s", (Gpu("x", "h100", "s"),)),))
        )
    with pytest.raises(InputError, match=r"server 's': \$\.gpus\[0\]: GPU .* names server"):
        Server("s", (gpu,))
    with pytest.raises(InputError, match=r"must have at least 1 item"):
        Server("s", ())
    with pytest.raises(InputError, match=r"\$\.memory_gb: must be > 0"):
        GpuType("v100", memory_gb=0.0)


def test_the_hare_view_time_matrices_are_the_instance_times_pair_by_pair():
    from hetsched.hare.view import hare_view

    fig9 = load_instance("hare_fig9")
    job = fig9.jobs[0]
    gid = fig9.gpus[-1].id
    edited = replace(
        fig9,
        jobs=(replace(job, train_time_per_gpu={gid: 7.5}, sync_time_per_gpu={gid: 0.25}),)
        + fig9.jobs[1:],
    )
    v = hare_view(edited)
    for n, j in enumerate(edited.jobs):
        for m, g in enumerate(edited.gpus):
            assert v.train[n, m] == edited.train_time(j.id, g.id)
            assert v.sync[n, m] == edited.sync_time(j.id, g.id)
    assert v.train[0, -1] == 7.5 and v.sync[0, -1] == 0.25
