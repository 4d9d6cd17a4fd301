"""The exact layer: how a formulation plugs in (:mod:`~hetsched.exact.spec`), the registry that
finds the formulations (:mod:`~hetsched.exact.registry`), ``solve()`` (build, solve, validate,
bound and gap), certificates and model export."""
