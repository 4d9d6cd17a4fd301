"""The sizes of a view whose jobs and GPUs are numbered by position in ``job_ids``/``gpu_ids``.

The papers' views (Hare's, the gang simulator's, Harmony's placement, the machine-schedule data)
keep ids in tuples and everything else in arrays indexed by those positions; these mixins give
them ``n_jobs`` and ``n_gpus`` once.
"""

from __future__ import annotations


class JobsIndexed:
    """A view with ``job_ids``: job n is position n."""

    job_ids: tuple[str, ...]

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)


class GpusIndexed:
    """A view with ``gpu_ids``: GPU m is position m."""

    gpu_ids: tuple[str, ...]

    @property
    def n_gpus(self) -> int:
        return len(self.gpu_ids)
