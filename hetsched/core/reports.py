"""What every validator returns: a :class:`ValidationReport` (valid, the objective it
recomputed, per-job completions, and every :class:`Violation` found). The task-schedule
validator is :mod:`hetsched.schedule.validate`; each paper's package has its own."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Violation:
    kind: str
    message: str


@dataclass
class ValidationReport:
    valid: bool
    objective: float | None
    completion: dict[str, float] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    def to_dict(self) -> dict:
        """valid, objective, completion and violations (each as ``{kind, message}``)."""
        return asdict(self)
