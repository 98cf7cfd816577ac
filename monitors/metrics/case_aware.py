"""The case-aware suite: eight criteria scored in ONE LLM call, aggregated into `s_final`.

Criteria (1 = no problem, 0 = severe problem; severity-band rubric in the prompt):
hallucination, retrieval_correctness, context_sufficiency, answer_helpfulness,
answer_type_fit, identifier_integrity, case_issue_identification, resolution_alignment.
``s_final`` = sum of weight * score with configurable weights (:class:`CaseAwareWeights`,
defaults 0.20, 0.15, 0.10, 0.15, 0.10, 0.10, 0.10, 0.10, summing to 1).

The embedded judge has no way to rate seven of the criteria: with it, ``hallucination``
is the support score of the response against the context, case and history (the
user's inputs, :func:`monitors.metrics.triad.user_inputs`, as *known* texts), and the
other criteria and ``s_final`` are skipped with reason "requires an LLM judge".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from monitors.judges.base import EmbeddedJudge, LLMJudge
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import TwoPathMetric, ask, embedded_call, scored, skipped
from monitors.metrics.prompts import PromptLimits, event_fields
from monitors.metrics.triad import user_inputs
from stream.contract.events import Event

__all__ = ["CRITERIA", "CaseAware", "CaseAwareVerdict", "CaseAwareWeights", "Criterion"]

CRITERIA = (
    "hallucination",
    "retrieval_correctness",
    "context_sufficiency",
    "answer_helpfulness",
    "answer_type_fit",
    "identifier_integrity",
    "case_issue_identification",
    "resolution_alignment",
)


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    justification: str = Field(description="one sentence")
    score: float = Field(ge=0, le=1)


class CaseAwareVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hallucination: Criterion
    retrieval_correctness: Criterion
    context_sufficiency: Criterion
    answer_helpfulness: Criterion
    answer_type_fit: Criterion
    identifier_integrity: Criterion
    case_issue_identification: Criterion
    resolution_alignment: Criterion


class CaseAwareWeights(BaseModel):
    """Weights of `s_final`; they must sum to 1."""

    model_config = ConfigDict(extra="forbid")

    hallucination: float = Field(0.20, ge=0, le=1)
    retrieval_correctness: float = Field(0.15, ge=0, le=1)
    context_sufficiency: float = Field(0.10, ge=0, le=1)
    answer_helpfulness: float = Field(0.15, ge=0, le=1)
    answer_type_fit: float = Field(0.10, ge=0, le=1)
    identifier_integrity: float = Field(0.10, ge=0, le=1)
    case_issue_identification: float = Field(0.10, ge=0, le=1)
    resolution_alignment: float = Field(0.10, ge=0, le=1)

    @model_validator(mode="after")
    def _sum_to_one(self) -> CaseAwareWeights:
        total = sum(self.as_dict().values())
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"case-aware weights must sum to 1, they sum to {total:.6g}")
        return self

    def as_dict(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in CRITERIA}

    def s_final(self, scores: dict[str, float]) -> float:
        return sum(weight * scores[name] for name, weight in self.as_dict().items())


@register_metric("case_aware")
class CaseAware(TwoPathMetric):
    name = "case_aware"
    needs = frozenset({"query", "response", "context", "history_or_case"})
    outputs = (*CRITERIA, "s_final")
    prompt_name = "case_aware"

    def __init__(
        self,
        *,
        weights: CaseAwareWeights | dict[str, float] | None = None,
        prompt_version: str = "v1",
        prompt_dir: str | None = None,
        limits: PromptLimits | dict[str, Any] | None = None,
    ) -> None:
        super().__init__(prompt_version=prompt_version, prompt_dir=prompt_dir, limits=limits)
        self.weights = CaseAwareWeights.model_validate(weights or {})

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        verdict, call = await ask(
            judge, self.prompt, CaseAwareVerdict, event_fields(event, self.limits)
        )
        scores = {name: getattr(verdict, name).score for name in CRITERIA}
        out = [
            scored(name, scores[name], getattr(verdict, name).justification, judge.name, call)
            for name in CRITERIA
        ]
        worst = min(CRITERIA, key=lambda n: scores[n])
        text = f"weighted sum of 8 criteria; weakest {worst} ({scores[worst]:.2f})"
        out.append(scored("s_final", self.weights.s_final(scores), text, judge.name, call))
        return out

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        contexts = [c.content for c in event.retrieved_context[: self.limits.max_chunks]]
        n = self.limits.max_history_messages
        contexts += [m.content for m in (event.history[-n:] if n else [])]
        if event.case is not None:
            contexts += [t for t in (event.case.subject, event.case.description) if t]
        known = user_inputs(event, n)  # the query and case metadata: anchors, not evidence
        result, call = await embedded_call(
            judge, self.name, judge.support, event.response, contexts, known
        )
        text = result.justification or "embedded support against context, case and history"
        out = [scored("hallucination", result.score, text, judge.name, call)]
        return out + skipped(self.outputs[1:], "requires an LLM judge", judge.name)
