"""Reproducible sweeps: instances x methods x seeds from a TOML spec, results appended to a
SQLite store as they finish, resumable, on a local process pool or a Dask cluster."""

from hetsched.sweep.runner import SweepReport, run_sweep
from hetsched.sweep.spec import Method, SweepSpec, Task, load_spec
from hetsched.sweep.store import ResultStore

__all__ = ["Method", "ResultStore", "SweepReport", "SweepSpec", "Task", "load_spec", "run_sweep"]
