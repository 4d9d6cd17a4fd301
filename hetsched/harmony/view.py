"""The arrays of one placement problem (Harmony, ToN'22): what :func:`placement_view` reads
from an instance and every placement method searches over. Imports only the ground, so
the fast evaluation and the heuristics stand right above it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.indexed import JobsIndexed

EPS = 1e-9


@dataclass(frozen=True)
class PlacementView(JobsIndexed):
    """Arrays of one placement problem: n indexes jobs (file order), s servers, k resources."""

    job_ids: tuple[str, ...]
    server_ids: tuple[str, ...]
    resources: tuple[str, ...]
    models: tuple[str, ...]
    capacity: np.ndarray  # [s, k]
    workers: np.ndarray  # W_n
    parameter_servers: np.ndarray  # P_n
    worker_demand: np.ndarray  # [n, k]
    ps_demand: np.ndarray  # [n, k]
    epochs: np.ndarray  # e_n
    standalone_speed: np.ndarray  # b_n, epochs per interval
    new: np.ndarray  # bool: placed in this interval (False: fixed by an earlier interval)
    fixed_workers: np.ndarray  # [n, s] placement of the earlier jobs
    fixed_ps: np.ndarray  # [n, s]
    interference: np.ndarray  # I[n, j], zero diagonal
    communication: np.ndarray  # kappa_n
    min_speed_fraction: float
    # heterogeneous servers (the gang simulator's Harmony policy builds these; a view read from
    # ``metadata.placement`` has neither): job n may use server s only where allowed[n, s], and
    # on s it runs at server_speed[n, s] x b_n, a job over several servers at its slowest one's
    allowed: np.ndarray | None = None  # [n, s] bool; None: everywhere
    server_speed: np.ndarray | None = None  # [n, s]; None: 1

    @property
    def n_servers(self) -> int:
        return len(self.server_ids)

    def weight(self) -> np.ndarray:
        """b_n / e_n: the reward of job n per unit of speed fraction."""
        return self.standalone_speed / self.epochs

    def fixed_usage(self) -> np.ndarray:
        """[s, k] resources the earlier jobs hold."""
        return self.fixed_workers.T @ self.worker_demand + self.fixed_ps.T @ self.ps_demand
