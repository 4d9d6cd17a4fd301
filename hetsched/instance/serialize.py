"""Write instances to files. The canonical JSON form and the problem's hash belong to the data
model (:mod:`hetsched.instance.model`, so that validators can name the instance a schedule
belongs to from the model alone) and are re-exported here."""

from __future__ import annotations

import json
from pathlib import Path

from hetsched.core.files import write_text_atomic
from hetsched.instance.model import FORMAT, Instance, instance_hash, instance_to_dict

__all__ = ["FORMAT", "dump_instance", "instance_hash", "instance_to_dict"]


def dump_instance(inst: Instance, path: str | Path) -> None:
    """Write ``inst`` as its canonical JSON, whole or not at all."""
    write_text_atomic(path, json.dumps(instance_to_dict(inst), indent=2) + "\n")
