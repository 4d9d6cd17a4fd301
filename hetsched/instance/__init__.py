"""Instances: the canonical data model, its JSON format, and per-paper views."""

from hetsched.instance.io import (
    dump_instance,
    instance_hash,
    instance_to_dict,
    load_instance,
    parse_instance,
)
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, ModelInfo, Server

__all__ = [
    "Cluster",
    "Gpu",
    "GpuType",
    "Instance",
    "Job",
    "ModelInfo",
    "Server",
    "dump_instance",
    "instance_hash",
    "instance_to_dict",
    "load_instance",
    "parse_instance",
]
