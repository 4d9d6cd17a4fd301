"""Declarative formulations, one module each; every module defines ``SPEC``.

Installed as ``hetsched.models``. See :mod:`hetsched.formulation` for the interface.
"""
