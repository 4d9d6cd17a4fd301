"""Shipped files (package data of hetsched; read through hetsched.resources)."""
