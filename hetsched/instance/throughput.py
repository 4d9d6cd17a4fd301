"""Per-type throughputs as one array: the X_{j,r} that Gavel's LPs, Hadar and the gang
simulator read from the instance."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hetsched.errors import InputError
from hetsched.instance.model import Instance


def throughput_row(instance: Instance, j: int, types: Sequence[str]) -> np.ndarray:
    """Job j's throughput on each of ``types``, in that order (0: it cannot run there); a type
    with no throughput in the file is an input error naming ``$.jobs[j].throughput``."""
    given = instance.jobs[j].throughput
    for t in types:
        if t not in given:
            raise InputError(
                instance.name,
                f"$.jobs[{j}].throughput",
                f"no throughput for GPU type '{t}' (one per type present; 0 = cannot run there)",
            )
    return np.array([given[t] for t in types], dtype=float)
