"""Harmony's evaluation workload (ToN'22, Sec. VII.B) for the one gang simulator: jobs of Table
I's models on testbed servers (2 GPUs, 8 cores, 50 Gbit/s), arriving over 20-minute intervals,
with the explicit speed model of :mod:`hetsched.harmony.problem` (interference, communication,
parameter servers, CPU and bandwidth) in ``metadata.placement``. The gang engine reads that
model (:mod:`hetsched.sim.gang_interference`) and Harmony's placement methods run on it as
``harmony:METHOD`` (:mod:`hetsched.sim.gang_policies.harmony`), with rounds of one interval.
``hetsched place-sim`` is a shortcut for ``compare`` on it; ``simulate``/``compare`` take it as the
workload ``harmony-jobs[:uniform|poisson]``.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.errors import InputError
from hetsched.harmony.data import INTERVAL_SECONDS
from hetsched.harmony.generate import make_instance, random_jobs
from hetsched.instance.model import Instance

ARRIVALS = ("uniform", "poisson")


def harmony_workload(
    seed: int,
    n_jobs: int = 60,
    n_servers: int = 6,
    arrivals: str = "uniform",
    rate: float | None = None,
) -> Instance:
    """Sec. VII.B: jobs from Table I, 1-3 workers, half parameter-server jobs; arrivals
    ``uniform`` (3 per interval on average: uniform times) or ``poisson`` (rate 2 per interval),
    in seconds (``INTERVAL_SECONDS`` an interval)."""
    rng = np.random.default_rng([seed, 11])
    jobs = random_jobs(rng, n_jobs)
    if arrivals == "uniform":
        rate = rate or 3.0
        times = np.sort(rng.uniform(0.0, n_jobs / rate, n_jobs))
    elif arrivals == "poisson":
        rate = rate or 2.0
        times = np.cumsum(rng.exponential(1.0 / rate, n_jobs))
    else:
        raise InputError("workload", "arrivals", f"one of {', '.join(ARRIVALS)}, not {arrivals!r}")
    for j, t in zip(jobs, times):
        j["arrival"] = float(t) * INTERVAL_SECONDS
    return make_instance(
        f"harmony-{arrivals}-{n_jobs}-s{seed}",
        n_servers,
        jobs,
        description=f"Harmony's evaluation jobs (ToN'22 Sec. VII.B), {arrivals} arrivals, seed {seed}",
    )
