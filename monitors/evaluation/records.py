"""What an evaluation run collects per event, about the judge and about the input."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from monitors.evaluation.stats import finite, quantile

__all__ = ["EventRecord", "InputStats", "JudgeStats"]


@dataclass
class EventRecord:
    """One scored event: detector failure modes, judge scores and gate results."""

    event_id: str
    category: str | None = None
    failure_modes: list[str] = field(default_factory=list)
    sampled: bool = False
    scores: dict[str, float] = field(default_factory=dict)  # scored metrics only
    judges: dict[str, str] = field(default_factory=dict)  # metric -> judge that scored it
    not_scored: dict[str, str] = field(default_factory=dict)  # metric -> skipped|judge_error
    gates: dict[str, bool | None] = field(default_factory=dict)
    calibrated: list[str] = field(default_factory=list)  # metrics with a calibrated score
    # the event carries a reference (labels.expected_answer / required_information)
    reference: bool = False

    def scale(self, metric: str) -> str | None:
        """Which scale `metric`'s score is on: ``"<judge> (calibrated)"`` or
        ``"<judge> (judge scale)"``; None when the record does not name the judge."""
        judge = self.judges.get(metric)
        if judge is None:
            return None
        return f"{judge} ({'calibrated' if metric in self.calibrated else 'judge scale'})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event_id": self.event_id,
            "category": self.category,
            "failure_modes": list(self.failure_modes),
            "sampled": self.sampled,
            "scores": {k: round(v, 4) for k, v in sorted(self.scores.items())},
            "gates": dict(self.gates),
        }
        if self.judges:
            out["judges"] = dict(sorted(self.judges.items()))
        if self.not_scored:
            out["not_scored"] = dict(sorted(self.not_scored.items()))
        if self.calibrated:
            out["calibrated"] = sorted(self.calibrated)
        if self.reference:
            out["reference"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EventRecord:
        return cls(
            event_id=str(data["event_id"]),
            category=data.get("category"),
            failure_modes=list(data.get("failure_modes") or []),
            sampled=bool(data.get("sampled", False)),
            scores={k: float(v) for k, v in (data.get("scores") or {}).items()},
            judges=dict(data.get("judges") or {}),
            not_scored=dict(data.get("not_scored") or {}),
            gates=dict(data.get("gates") or {}),
            calibrated=list(data.get("calibrated") or []),
            reference=bool(data.get("reference", False)),
        )


@dataclass
class InputStats:
    path: str = ""
    lines: int = 0
    scored: int = 0
    invalid: int = 0
    duplicate: int = 0
    judged: int = 0
    labels_matched: int = 0
    labels_unmatched: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class JudgeStats:
    """Judge cost and speed: wall-clock per judged event, plus the LLM calls' accounting."""

    name: str = "none"
    latencies_s: list[float] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        lat = self.latencies_s
        return {
            "name": self.name,
            "judged": len(lat),
            "latency_s": {
                "mean": finite(sum(lat) / len(lat)) if lat else None,
                "p50": quantile(lat, 0.5),
                "p95": quantile(lat, 0.95),
                "total": finite(sum(lat)),
            },
            "llm_calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "cost_per_judged_event_usd": round(self.cost_usd / len(lat), 8) if lat else None,
        }
