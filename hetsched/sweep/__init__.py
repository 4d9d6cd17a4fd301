"""Reproducible sweeps: instances x methods x seeds from a TOML spec, results appended to a
SQLite store as they finish, resumable, on a local process pool or a Dask cluster."""

from hetsched.sweep.runner import SweepReport
from hetsched.sweep.spec import Method, SweepSpec, Task
from hetsched.sweep.store import ResultStore
from hetsched.sweep.tasks import load_spec, run_sweep

__all__ = ["Method", "ResultStore", "SweepReport", "SweepSpec", "Task", "load_spec", "run_sweep"]
