"""``tonality``: compliance of the response with brand-voice guidelines. LLM judges only.

The guidelines come from the settings (``judge.metrics: [{type: tonality, guidelines: ...}]``: a
list of strings, or one string with one guideline per line), not from the event, so the
metric runs on every sampled turn (it is not reference-based). One call judges the
response against every numbered guideline: complies, violates or not applicable.
score = complied / (complied + violated); a response to which no guideline applies
scores 1. Severity bands as for every judge score (severe below 0.31 ...). Every
guideline must come back judged, or the call is a ``schema_violation`` judge error.
Without guidelines the metric refuses to start (a configuration error names it).
The embedded judge skips it ("requires an LLM judge").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from monitors.judges.base import JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import TwoPathMetric, ask, scored
from monitors.metrics.prompts import PromptLimits, event_fields, numbered
from stream.contract.events import Event

__all__ = ["MAX_GUIDELINES", "Tonality", "TonalityVerdict"]

MAX_GUIDELINES = 20


class GuidelineVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    verdict: Literal["complies", "violates", "not_applicable"]
    reason: str


class TonalityVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    guidelines: list[GuidelineVerdict] = Field(max_length=MAX_GUIDELINES)
    justification: str


@register_metric("tonality")
class Tonality(TwoPathMetric):
    name = "tonality"
    needs = frozenset({"query", "response"})
    outputs = ("tonality",)
    prompt_name = "tonality"
    llm_only = True

    def __init__(
        self,
        *,
        guidelines: list[str] | str | None = None,
        prompt_version: str = "v1",
        prompt_dir: str | None = None,
        limits: PromptLimits | dict[str, Any] | None = None,
    ) -> None:
        items = guidelines.splitlines() if isinstance(guidelines, str) else guidelines or []
        if not all(isinstance(g, str) for g in items):
            raise ValueError("guidelines must be a list of strings")
        self.guidelines = [g.strip() for g in items if g.strip()]
        if not self.guidelines:
            raise ValueError(
                "tonality needs guidelines: judge.metrics: [{type: tonality, guidelines: [...]}]"
            )
        if len(self.guidelines) > MAX_GUIDELINES:
            raise ValueError(f"at most {MAX_GUIDELINES} tonality guidelines")
        super().__init__(prompt_version=prompt_version, prompt_dir=prompt_dir, limits=limits)

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits)
        fields["guidelines"] = numbered("guidelines", self.guidelines, self.limits)
        verdict, call = await ask(judge, self.prompt, TonalityVerdict, fields)
        judged = {g.id: g for g in verdict.guidelines}
        ids = range(1, len(self.guidelines) + 1)
        unjudged = [n for n in ids if n not in judged]
        if unjudged:
            detail = f"{len(unjudged)} of {len(self.guidelines)} guidelines unjudged"
            raise JudgeError("schema_violation", detail, call)
        complied = sum(judged[n].verdict == "complies" for n in ids)
        violated = [n for n in ids if judged[n].verdict == "violates"]
        score = complied / (complied + len(violated)) if complied + len(violated) else 1.0
        text = f"{len(violated)} of {len(self.guidelines)} guidelines violated"
        if violated:
            first = judged[violated[0]]
            text += f", e.g. #{first.id} ({first.reason[:120]})"
        details = {
            "guidelines": [
                {"guideline": g[:160], "verdict": judged[n].verdict, "reason": judged[n].reason}
                for n, g in zip(ids, self.guidelines, strict=True)
            ]
        }
        out = scored(self.name, score, f"{text}. {verdict.justification}", judge.name, call)
        return [replace(out, details=details)]
