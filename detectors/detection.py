"""One finding of a detector: what every detector returns and every exporter reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["EVIDENCE_MAX_CHARS", "Detection"]

EVIDENCE_MAX_CHARS = 160


@dataclass(frozen=True, slots=True)
class Detection:
    """One finding. `span` indexes the response text (characters), when there is one."""

    detector: str
    category: str
    evidence: str
    span: tuple[int, int] | None = None
    failure_mode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "category": self.category,
            "evidence": self.evidence[:EVIDENCE_MAX_CHARS],
            "span": list(self.span) if self.span is not None else None,
            "failure_mode": self.failure_mode,
        }
