"""Trace-driven simulation: the event engine (:mod:`.engine`), online policies (:mod:`.policies`),
workloads (:mod:`.workloads`) and metrics (:mod:`.metrics`)."""
