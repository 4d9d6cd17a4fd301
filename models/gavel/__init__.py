"""Gavel's heterogeneity-aware allocation policies (Narayanan et al., OSDI 2020), one file per
policy, over x_{j,r} with the base constraints of :mod:`hetsched.gavel.problem`."""
