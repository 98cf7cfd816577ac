"""Metric bundles: several metrics' outputs from ONE LLM judge call.

* ``rag_triad`` — `faithfulness`, `context_relevance`, `answer_relevance` (prompt
  ``rag_triad/v1``): per-chunk relevance, the response's claims each verified against
  the context, and the answer-relevance rubric, all in one reply.
* ``citation_policy`` — `citation_accuracy`, `source_policy_usage` (prompt
  ``citation_policy/v1``): every cited sentence checked against the chunks it cites and
  every ``quote_only`` / ``no_use`` chunk checked for use, in one reply.

Each output keeps the scoring rules, skip reasons and `schema_violation` checks of the
separate metric of the same name (the bundle reuses their code): a reply that leaves out
a chunk or a cited sentence errors *that* output only; the others of the same call are
still scored, and all share the call's `JudgeCall`. The bundle asks its own prompt only
when every part would call the LLM; otherwise (an input missing, no restricted chunk, no
cited sentence that resolves to a chunk) it runs the parts themselves, which skip what
they cannot score, so at most one call is made either way. With the embedded judge the
bundle runs the parts: the same outcomes, calls and accounting as the separate metrics.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from monitors.judges.base import EmbeddedJudge, JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, missing_inputs, register_metric
from monitors.metrics.citations import CitationAccuracy, CitationAccuracyVerdict, citation_units
from monitors.metrics.common import TwoPathMetric, ask, errored, scored
from monitors.metrics.prompts import PromptLimits, event_fields, format_context, load_prompt
from monitors.metrics.source_policy import SourcePolicyUsage, SourcePolicyVerdict
from monitors.metrics.triad import (
    MAX_CLAIMS,
    AnswerRelevance,
    AnswerRelevanceVerdict,
    ContextRelevance,
    ContextRelevanceVerdict,
    Faithfulness,
    FaithfulnessVerdict,
    context_relevance_outcome,
    faithfulness_outcome,
)
from stream.contract.events import Event

__all__ = [
    "CitationPolicy",
    "CitationPolicyVerdict",
    "MetricBundle",
    "RagTriad",
    "RagTriadVerdict",
]


class RagTriadVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_relevance: ContextRelevanceVerdict
    faithfulness: FaithfulnessVerdict
    answer_relevance: AnswerRelevanceVerdict


class CitationPolicyVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    citations: CitationAccuracyVerdict
    source_policy: SourcePolicyVerdict


def _guarded(name: str, judge: str, make: Callable[[], MetricOutcome]) -> list[MetricOutcome]:
    """One output of a shared call: its outcome, or `judge_error` for it alone."""
    try:
        return [make()]
    except JudgeError as err:
        return errored([name], err, judge)


class MetricBundle:
    """Outputs of several `TwoPathMetric` parts, from one LLM call when all would call."""

    name: str
    prompt_name: str
    part_types: tuple[type[TwoPathMetric], ...] = ()

    def __init__(
        self,
        *,
        prompt_version: str = "v1",
        prompt_dir: str | None = None,
        limits: PromptLimits | dict[str, Any] | None = None,
    ) -> None:
        self.limits = PromptLimits.model_validate(limits or {})
        self.prompt = load_prompt(self.prompt_name, prompt_version, prompt_dir)
        self.parts = [t(prompt_dir=prompt_dir, limits=self.limits) for t in self.part_types]
        self.outputs: tuple[str, ...] = tuple(o for p in self.parts for o in p.outputs)
        self.needs: frozenset[str] = frozenset().union(*(p.needs for p in self.parts))

    def ready(self, event: Event) -> bool:
        """True when every part would make an LLM call (then one bundled call does)."""
        return all(
            not missing_inputs(event, p.needs) and p.precheck(event) is None for p in self.parts
        )

    async def __call__(self, event: Event, judge: LLMJudge | EmbeddedJudge) -> list[MetricOutcome]:
        if isinstance(judge, LLMJudge) and self.ready(event):
            try:
                return await self.with_llm(event, judge)
            except JudgeError as err:
                return errored(self.outputs, err, judge.name)
        runs = await asyncio.gather(*(part(event, judge) for part in self.parts))
        return [outcome for run in runs for outcome in run]

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        raise NotImplementedError


@register_metric("rag_triad")
class RagTriad(MetricBundle):
    name = "rag_triad"
    prompt_name = "rag_triad"
    part_types = (Faithfulness, ContextRelevance, AnswerRelevance)

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits) | {"max_claims": str(MAX_CLAIMS)}
        verdict, call = await ask(judge, self.prompt, RagTriadVerdict, fields)
        j, lim = judge.name, self.limits
        answer = verdict.answer_relevance
        return [
            *_guarded(
                "faithfulness",
                j,
                lambda: faithfulness_outcome(verdict.faithfulness, event, lim, j, call),
            ),
            *_guarded(
                "context_relevance",
                j,
                lambda: context_relevance_outcome(verdict.context_relevance, event, lim, j, call),
            ),
            scored("answer_relevance", answer.score, answer.justification, j, call),
        ]


@register_metric("citation_policy")
class CitationPolicy(MetricBundle):
    name = "citation_policy"
    prompt_name = "citation_policy"
    part_types = (CitationAccuracy, SourcePolicyUsage)

    def ready(self, event: Event) -> bool:
        # a cited sentence must resolve to a chunk, or citation_accuracy asks nothing
        return super().ready(event) and any(u.chunks for u in citation_units(event))

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        accuracy, policy = self.parts
        assert isinstance(accuracy, CitationAccuracy) and isinstance(policy, SourcePolicyUsage)
        units = citation_units(event)
        restricted = policy.restricted(event)
        cited, items = accuracy.items_prompt(units)
        # the chunks each separate prompt would show: the first max_chunks cited ones and
        # the (at most max_chunks) restricted ones, each once, in retrieval order
        wanted = {c.id for c in cited[: self.limits.max_chunks]} | {c.id for c in restricted}
        shown = list({c.id: c for c in event.retrieved_context if c.id in wanted}.values())
        room = self.limits.model_copy(update={"max_chunks": max(1, len(shown))})
        fields = event_fields(event, self.limits) | {
            "context": format_context(shown, room),
            "items": items,
        }
        verdict, call = await ask(judge, self.prompt, CitationPolicyVerdict, fields)
        j = judge.name
        return [
            *_guarded(
                accuracy.name, j, lambda: accuracy.outcome(units, verdict.citations, j, call)
            ),
            *_guarded(
                policy.name, j, lambda: policy.outcome(restricted, verdict.source_policy, j, call)
            ),
        ]
