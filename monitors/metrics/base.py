"""The judge-metric extension point: an async callable registered by name.

A metric declares the event inputs it needs; when one is missing the metric is
*skipped* (never scored 0). It runs with the configured judge (an LLM judge or the
embedded judge) and returns one `MetricOutcome` per score it produces (the case-aware
suite produces nine). A judge failure is an outcome with status `judge_error` and a
bounded reason: never a made-up score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from monitors.judges.base import EmbeddedJudge, JudgeCall, LLMJudge
from stream.contract.events import Event
from stream.contract.registry import Registry
from stream.contract.scales import SEVERITY_BANDS, severity

__all__ = [
    "INPUTS",
    "SEVERITY_BANDS",
    "JudgeMetric",
    "MetricOutcome",
    "available_metrics",
    "create_metric",
    "missing_inputs",
    "register_metric",
    "severity",
]


Input = Literal["query", "response", "context", "citations", "history_or_case", "reference"]
#: "reference": `labels.expected_answer` or `labels.required_information`
#: (:mod:`stream.contract.reference`); metrics that need it are *reference-based*
INPUTS: tuple[str, ...] = (
    "query",
    "response",
    "context",
    "citations",
    "history_or_case",
    "reference",
)


@dataclass(frozen=True)
class MetricOutcome:
    """One named score of one event: scored, skipped (missing input) or judge_error."""

    metric: str
    status: Literal["scored", "skipped", "judge_error"]
    score: float | None = None
    justification: str = ""
    judge: str = ""
    reason: str | None = None  # skipped: which input is missing; judge_error: the error reason
    call: JudgeCall | None = None  # accounting of the judge call that produced it
    # True: `score` is the judge's calibrated probability that the turn is fine (a score
    # map fitted on labelled data, `raw_score` the judge's own score before the map);
    # False: the judge's own scale (LLM verdict shares, uncalibrated embedded metrics)
    calibrated: bool = False
    raw_score: float | None = None
    # statement-level verdicts and the like (scorecard only; bounded by the metric)
    details: dict[str, Any] | None = None
    # scored against the turn's reference (labels.expected_answer ...): exported for
    # reference turns, which never join the population of unlabelled traffic
    reference_based: bool = False

    @property
    def severity(self) -> str | None:
        return severity(self.score) if self.score is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The scorecard form: {"score", "severity", "justification", "judge",
        "calibrated"} (+ status; + "raw_score" when calibrated)."""
        out: dict[str, Any] = {"status": self.status, "judge": self.judge}
        if self.status == "scored":
            out.update(
                score=round(float(self.score or 0.0), 4),
                severity=self.severity,
                justification=self.justification[:500],
                calibrated=self.calibrated,
            )
            if self.calibrated and self.raw_score is not None:
                out["raw_score"] = round(float(self.raw_score), 4)
            if self.details:
                out["details"] = self.details
        else:
            out["reason"] = self.reason
        return out


def missing_inputs(event: Event, needs: frozenset[str]) -> list[str]:
    reference = event.reference if "reference" in needs else None
    present = {
        "reference": reference is not None and reference.present,
        "query": bool(event.query.strip()),
        "response": bool(event.response.strip()),
        "context": bool(event.retrieved_context),
        "citations": bool(event.citations),
        "history_or_case": bool(event.history) or event.case is not None,
    }
    return sorted(n for n in needs if not present.get(n, False))


@runtime_checkable
class JudgeMetric(Protocol):
    name: str
    needs: frozenset[str]  # subset of INPUTS
    outputs: tuple[str, ...]  # names of the scores it produces

    async def __call__(
        self, event: Event, judge: LLMJudge | EmbeddedJudge
    ) -> list[MetricOutcome]: ...


_METRICS: Registry[JudgeMetric] = Registry("metric")

#: class decorator: register a judge metric under a name (config ``judge.metrics``)
register_metric = _METRICS.register
available_metrics = _METRICS.available
create_metric = _METRICS.create
