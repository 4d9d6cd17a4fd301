"""Declarative formulations, one module each; every module defines ``SPEC``.

Installed as ``hetsched.models``. See :mod:`hetsched.spec` for the interface (:mod:`hetsched.formulation` is the registry that finds them).
"""
