"""Shipped files (package data of hetsched; read through hetsched.core.resources)."""
