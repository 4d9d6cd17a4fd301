"""OR-Tools and highspy each ship a libhighs.so.1; in one process they must be the same HiGHS.

Import this before either library: it imports both and turns the deep ImportError a
mismatch causes into one clear message.
"""

from __future__ import annotations

from hetsched.core.errors import SolverError

try:
    import highspy  # noqa: F401  (loads libhighs.so.1 first)
    from ortools.sat.python import cp_model  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed wheels
    if "Highs" in str(exc) or "highs" in str(exc):
        raise SolverError(
            "highspy and ortools bring different HiGHS versions (libhighs.so.1) and cannot share a process; "
            "install the versions pinned in hetsched's pyproject.toml (pip install -e .)"
        ) from exc
    raise
