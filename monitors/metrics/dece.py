"""``dece``: decomposed precision and recall against a gold answer (outputs
``dece_precision``, ``dece_recall``, ``dece_f2``). LLM judges only.

After DeCE (decomposed criteria-based evaluation):

* **recall**: evaluation criteria are extracted from the gold answer's *required
  information* (``labels.required_information``; the expected answer when there is
  none), one call, cached by a hash of the gold answer (judge, prompt version, query,
  expected answer, required information): every replay of the same canary reuses them.
  dece_recall = criteria the response satisfies / criteria;
* **precision**: the response is split into its informative elements and each is
  verified against the gold answer and ``labels.helpful_information``: correct,
  incorrect or unverifiable. dece_precision = correct / elements (strict: an
  unverifiable element counts against it; a response with no element scores 1 when it
  states no facts, and is a ``schema_violation`` judge error when it does, see
  :func:`~monitors.metrics.sentences.states_facts`);
* **dece_f2** = 5·P·R / (4·P + R): recall weighs more, as in the paper.

Both parts come from one call (after the cached criteria). Every criterion must come
back judged, or the call is a ``schema_violation`` judge error. The element and
criterion verdicts go into the scorecard (``details``). The embedded judge skips the
metric ("requires an LLM judge").
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from monitors.judges.base import JudgeCall, JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import TwoPathMetric, ask, combine_calls, scored
from monitors.metrics.prompts import (
    PromptLimits,
    event_fields,
    load_prompt,
    numbered,
    reference_fields,
)
from monitors.metrics.sentences import states_facts
from stream.contract.events import Event

__all__ = ["MAX_CRITERIA", "Criteria", "DeCE", "DeceVerdict", "f_beta"]

MAX_CRITERIA = 20
MAX_ELEMENTS = 30


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Criteria(_Strict):
    criteria: list[str] = Field(min_length=1, max_length=MAX_CRITERIA)


class ElementVerdict(_Strict):
    element: str
    verdict: Literal["correct", "incorrect", "unverifiable"]


class CriterionVerdict(_Strict):
    id: int
    satisfied: bool
    reason: str


class DeceVerdict(_Strict):
    elements: list[ElementVerdict] = Field(max_length=MAX_ELEMENTS)
    criteria: list[CriterionVerdict] = Field(max_length=MAX_CRITERIA)
    justification: str


def f_beta(precision: float, recall: float, beta: float = 2.0) -> float:
    b2 = beta * beta
    denominator = b2 * precision + recall
    return (1 + b2) * precision * recall / denominator if denominator else 0.0


@register_metric("dece")
class DeCE(TwoPathMetric):
    name = "dece"
    needs = frozenset({"query", "response", "reference"})
    outputs = ("dece_precision", "dece_recall", "dece_f2")
    prompt_name = "dece"
    llm_only = True

    def __init__(
        self,
        *,
        cache_size: int = 1024,
        prompt_version: str = "v1",
        prompt_dir: str | None = None,
        limits: PromptLimits | dict[str, Any] | None = None,
    ) -> None:
        if cache_size < 1:
            raise ValueError("cache_size must be >= 1")
        super().__init__(prompt_version=prompt_version, prompt_dir=prompt_dir, limits=limits)
        self.extract = load_prompt("dece_criteria", prompt_version, prompt_dir)
        self.cache_size = cache_size
        self._criteria: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def _key(self, judge: LLMJudge, fields: dict[str, str]) -> str:
        parts = (judge.name, self.extract.key, fields["query"], fields["expected_answer"])
        raw = "\0".join((*parts, fields["required_information"]))
        return hashlib.sha256(raw.encode()).hexdigest()

    async def criteria(
        self, judge: LLMJudge, fields: dict[str, str]
    ) -> tuple[list[str], JudgeCall | None]:
        """The gold answer's criteria: cached (no call), or extracted by one call."""
        key = self._key(judge, fields)
        with self._lock:
            if key in self._criteria:
                self._criteria.move_to_end(key)
                return self._criteria[key], None
        found, call = await ask(
            judge, self.extract, Criteria, fields | {"max_criteria": str(MAX_CRITERIA)}
        )
        with self._lock:
            self._criteria[key] = found.criteria
            while len(self._criteria) > self.cache_size:
                self._criteria.popitem(last=False)
        return found.criteria, call

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits) | reference_fields(event, self.limits)
        criteria, first = await self.criteria(judge, fields)
        fields["criteria"] = numbered("criteria", criteria, self.limits)
        fields["max_elements"] = str(MAX_ELEMENTS)
        verdict, call = await ask(judge, self.prompt, DeceVerdict, fields)
        if first is not None:
            call = combine_calls(first, call)
        judged = {c.id: c for c in verdict.criteria}
        unjudged = [n for n in range(1, len(criteria) + 1) if n not in judged]
        if unjudged:
            detail = f"{len(unjudged)} of {len(criteria)} criteria unjudged, e.g. #{unjudged[0]}"
            raise JudgeError("schema_violation", detail, call)
        if not verdict.elements and states_facts(event.response):
            detail = "no elements extracted from a response that states facts: not scored"
            raise JudgeError("schema_violation", detail, call)
        correct = sum(e.verdict == "correct" for e in verdict.elements)
        precision = correct / len(verdict.elements) if verdict.elements else 1.0
        met = sum(judged[n].satisfied for n in range(1, len(criteria) + 1))
        recall = met / len(criteria)
        text = (
            f"{correct}/{len(verdict.elements)} elements correct, {met}/{len(criteria)} "
            f"criteria met. {verdict.justification}"
        )
        details = {
            "criteria_cached": first is None,
            "elements": [e.model_dump() for e in verdict.elements],
            "criteria": [
                {"criterion": c[:200], "satisfied": judged[n].satisfied}
                for n, c in enumerate(criteria, 1)
            ],
        }
        scores = (precision, recall, f_beta(precision, recall))
        out = [
            scored(name, value, text, judge.name, call)
            for name, value in zip(self.outputs, scores, strict=True)
        ]
        return [replace(out[0], details=details), *out[1:]]
