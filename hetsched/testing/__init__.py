"""Helpers for testing algorithms against hetsched (needs the ``test`` extra: hypothesis)."""
