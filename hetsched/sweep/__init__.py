"""Reproducible sweeps: instances x methods x seeds from a TOML spec, results appended to a
run store (JSON lines) as they finish, resumable, on a local process pool or a Dask cluster."""

from hetsched.sweep.runner import SweepReport
from hetsched.sweep.spec import Method, SweepSpec, Task
from hetsched.sweep.store import open_store
from hetsched.sweep.tasks import load_spec, run_sweep

__all__ = ["Method", "SweepReport", "SweepSpec", "Task", "load_spec", "open_store", "run_sweep"]
