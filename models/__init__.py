"""Declarative formulations, one module each; every module defines ``SPEC``.

Installed as ``hetsched.models``. See :mod:`hetsched.exact.spec` for the interface (:mod:`hetsched.exact.registry` is the registry that finds them).
"""
