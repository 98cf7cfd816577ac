"""``answer_correctness``: the response against the turn's expected (golden) answer.

Reference-based: it needs ``labels.expected_answer`` or ``labels.required_information``
(:mod:`stream.contract.reference`) and is skipped on turns without one.

* LLM judge, **holistic**: one prompt, a 0-10 grade with a reason; score = grade / 10.
* Embedded judge: statement-level semantic alignment of the response with the expected
  answer, polarity-aware (:mod:`monitors.judges.reference_alignment`); the score is the
  fitted probability that the response says what the expected answer says. A judge
  without ``align`` skips the metric ("requires an LLM judge").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from monitors.judges.base import EmbeddedJudge, LLMJudge
from monitors.judges.reference_alignment import Alignment, ReferenceJudge, StatementMatch
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import TwoPathMetric, ask, embedded_call, scored, skipped
from monitors.metrics.prompts import event_fields, reference_fields
from stream.contract.events import Event

__all__ = [
    "AnswerCorrectness",
    "HolisticVerdict",
    "alignment_details",
    "alignment_text",
    "gold_answer",
]

MAX_DETAIL_STATEMENTS = 20


class HolisticVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(description="one or two sentences")
    grade: int = Field(ge=0, le=10)


def gold_answer(event: Event) -> str:
    """What the response is compared with: the expected answer, else the required
    information (the metric is skipped before this when the turn has neither)."""
    ref = event.reference
    return ref.gold if ref is not None else ""


def _matches(items: list[StatementMatch]) -> list[dict[str, Any]]:
    return [
        {
            "statement": m.text[:200],
            "closest": m.closest[:200],
            "similarity": m.similarity,
            "agrees": m.agrees,
        }
        for m in items[:MAX_DETAIL_STATEMENTS]
    ]


def alignment_details(result: Alignment) -> dict[str, Any]:
    """The statement-level verdicts of an embedded alignment, for the scorecard."""
    return {
        "response_statements": _matches(result.response),
        "expected_statements": _matches(result.expected),
        "features": result.features,
    }


def alignment_text(result: Alignment) -> str:
    tp, fp, fn = result.counts()
    text = f"{tp} of {tp + fp} response statements agree with the expected answer, {fn} missing"
    disagree = [m for m in result.response if not m.agrees]
    if disagree:
        text += f"; e.g. {disagree[0].text[:140]!r} (closest cosine {disagree[0].similarity:.2f})"
    return text


@register_metric("answer_correctness")
class AnswerCorrectness(TwoPathMetric):
    name = "answer_correctness"
    needs = frozenset({"query", "response", "reference"})
    outputs = ("answer_correctness",)
    prompt_name = "answer_correctness"

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits) | reference_fields(event, self.limits)
        verdict, call = await ask(judge, self.prompt, HolisticVerdict, fields)
        text = f"grade {verdict.grade}/10: {verdict.reason}"
        return [scored(self.name, verdict.grade / 10.0, text, judge.name, call)]

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        if not isinstance(judge, ReferenceJudge):
            return skipped(self.outputs, "requires an LLM judge", judge.name)
        result, call = await embedded_call(
            judge, self.name, judge.align, event.response, gold_answer(event), event.query
        )
        out = scored(self.name, result.score, alignment_text(result), judge.name, call)
        return [replace(out, details=alignment_details(result))]
