"""``answer_correctness_analytic``: statement-level precision, recall and F1 against the
expected answer (outputs ``answer_precision``, ``answer_recall``, ``answer_f1``).

The response and the expected answer are split into factual statements; each response
statement is a TP (the expected answer states it) or an FP, each expected statement is
covered or missing (FN). precision = TP / (TP + FP), recall = (expected statements
covered) / (expected statements), F1 their harmonic mean. A response with no statement
has precision 1 (it asserts nothing wrong) and recall 0 — but only when it states no
facts (:func:`~monitors.metrics.sentences.states_facts`): a judge that finds no
statement in a response that does is a ``schema_violation`` judge error; an expected
answer with no statement gives recall 1.

* LLM judge, option ``variant``:
  ``two_step`` (default): one call extracts the statements, a second classifies them;
  ``contextual``: one prompt extracts and classifies, each statement read in the context
  of the question. Every statement must come back classified, in order, or the call is
  a ``schema_violation`` judge error.
* Embedded judge: the polarity-aware alignment of
  :mod:`monitors.judges.reference_alignment` (a sentence is a statement; it agrees with
  its closest sentence on the other side at cosine >= the model's statement threshold).

The statement verdicts go into the scorecard (``details``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from monitors.judges.base import EmbeddedJudge, JudgeCall, JudgeError, LLMJudge
from monitors.judges.reference_alignment import ReferenceJudge
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import (
    TwoPathMetric,
    ask,
    combine_calls,
    embedded_call,
    scored,
    skipped,
)
from monitors.metrics.correctness import alignment_details, alignment_text, gold_answer
from monitors.metrics.prompts import (
    PromptLimits,
    event_fields,
    load_prompt,
    numbered,
    reference_fields,
)
from monitors.metrics.sentences import states_facts
from stream.contract.events import Event

__all__ = ["AnswerCorrectnessAnalytic", "StatementVerdicts", "Statements", "prf"]

MAX_STATEMENTS = 30


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Statements(_Strict):
    response_statements: list[str] = Field(max_length=MAX_STATEMENTS)
    expected_statements: list[str] = Field(max_length=MAX_STATEMENTS)


class ResponseStatement(_Strict):
    statement: str
    verdict: Literal["TP", "FP"]


class ExpectedStatement(_Strict):
    statement: str
    verdict: Literal["covered", "missing"]


class StatementVerdicts(_Strict):
    response_statements: list[ResponseStatement] = Field(max_length=MAX_STATEMENTS)
    expected_statements: list[ExpectedStatement] = Field(max_length=MAX_STATEMENTS)
    justification: str


def prf(tp: int, fp: int, covered: int, expected: int) -> tuple[float, float, float]:
    """(precision, recall, F1) with the conventions of the module docstring."""
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = covered / expected if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _require_statements(count: int, event: Event, call: JudgeCall) -> None:
    """No response statement from a response that states facts is a judge failure
    (`schema_violation`), not a precision of 1 (as for faithfulness' claims)."""
    if count == 0 and states_facts(event.response):
        detail = "no statements extracted from a response that states facts: not scored"
        raise JudgeError("schema_violation", detail, call)


@register_metric("answer_correctness_analytic")
class AnswerCorrectnessAnalytic(TwoPathMetric):
    name = "answer_correctness_analytic"
    needs = frozenset({"query", "response", "reference"})
    outputs = ("answer_precision", "answer_recall", "answer_f1")
    prompt_name = "answer_statements"

    def __init__(
        self,
        *,
        variant: Literal["two_step", "contextual"] = "two_step",
        prompt_version: str = "v1",
        prompt_dir: str | None = None,
        limits: PromptLimits | dict[str, Any] | None = None,
    ) -> None:
        if variant not in ("two_step", "contextual"):
            raise ValueError(f"variant must be two_step or contextual, not {variant!r}")
        super().__init__(prompt_version=prompt_version, prompt_dir=prompt_dir, limits=limits)
        self.variant = variant
        self.classify = load_prompt("answer_alignment", prompt_version, prompt_dir)
        self.contextual = load_prompt("answer_correctness_contextual", prompt_version, prompt_dir)

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits) | reference_fields(event, self.limits)
        fields["max_statements"] = str(MAX_STATEMENTS)
        if self.variant == "contextual":
            verdicts, call = await ask(judge, self.contextual, StatementVerdicts, fields)
            _require_statements(len(verdicts.response_statements), event, call)
        else:
            found, first = await ask(judge, self.prompt, Statements, fields)
            _require_statements(len(found.response_statements), event, first)
            fields["response_statements"] = numbered(
                "statements", found.response_statements, self.limits, side="response"
            )
            fields["expected_statements"] = numbered(
                "statements", found.expected_statements, self.limits, side="expected"
            )
            verdicts, second = await ask(judge, self.classify, StatementVerdicts, fields)
            call = combine_calls(first, second)
            got = (len(verdicts.response_statements), len(verdicts.expected_statements))
            want = (len(found.response_statements), len(found.expected_statements))
            if got != want:
                raise JudgeError("schema_violation", f"{got} verdicts for {want} statements", call)
        tp = sum(s.verdict == "TP" for s in verdicts.response_statements)
        fp = len(verdicts.response_statements) - tp
        covered = sum(s.verdict == "covered" for s in verdicts.expected_statements)
        scores = prf(tp, fp, covered, len(verdicts.expected_statements))
        text = (
            f"{tp} TP, {fp} FP, {len(verdicts.expected_statements) - covered} FN "
            f"({self.variant}). {verdicts.justification}"
        )
        details = {
            "variant": self.variant,
            "response_statements": [s.model_dump() for s in verdicts.response_statements],
            "expected_statements": [s.model_dump() for s in verdicts.expected_statements],
        }
        return self._outcomes_of(scores, text, judge.name, call, details)

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        if not isinstance(judge, ReferenceJudge):
            return skipped(self.outputs, "requires an LLM judge", judge.name)
        result, call = await embedded_call(
            judge, self.name, judge.align, event.response, gold_answer(event), event.query
        )
        tp, fp, fn = result.counts()
        scores = prf(tp, fp, len(result.expected) - fn, len(result.expected))
        details = alignment_details(result)
        return self._outcomes_of(scores, alignment_text(result), judge.name, call, details)

    def _outcomes_of(
        self,
        scores: tuple[float, float, float],
        text: str,
        judge: str,
        call: JudgeCall,
        details: dict[str, Any],
    ) -> list[MetricOutcome]:
        out = [
            scored(name, value, text, judge, call)
            for name, value in zip(self.outputs, scores, strict=True)
        ]
        return [replace(out[0], details=details), *out[1:]]
