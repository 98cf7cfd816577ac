"""The RAG triad: faithfulness, context relevance, answer relevance.

* ``faithfulness`` — one LLM call extracts the response's claims and verifies every one
  against the context (batched, not one call per claim); score = claims supported by a
  *shown* chunk / claims (:func:`faithfulness_outcome`: a "supported" verdict without a
  shown chunk id counts as unsupported; no claim scores 1 only when the response states
  no facts, else it is a `schema_violation` judge error). Embedded: the judge's support
  score of the response against the chunk contents; the user's own inputs (query, case,
  the user's history messages: :func:`user_inputs`) are passed as *known* texts, so an
  identifier or number the user gave is not counted as invented — but only the chunks
  are evidence (see docs/metrics-judge.md, "What counts as grounding").
* ``context_relevance`` — one LLM call rates every shown chunk 0-1; score = the mean
  over the chunks shown (the first ``limits.max_chunks``, in retrieval order). Embedded:
  the mean of ``relevance(query, chunks)``, each chunk's relevance calibrated first when
  the judge has a score map for it (the expected share of on-topic chunks).
* ``answer_relevance`` — does the response address the question (not: is it right);
  LLM rubric 0-1, embedded ``relevance(query, [response])``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from monitors.judges.base import CalibratedJudge, EmbeddedJudge, JudgeCall, JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import TwoPathMetric, ask, embedded_call, mean, scored
from monitors.metrics.prompts import PromptLimits, event_fields, shown_chunk_ids
from monitors.metrics.sentences import SUBSTANTIVE_WORDS, states_facts
from stream.contract.events import Event

__all__ = [
    "MAX_CLAIMS",
    "AnswerRelevance",
    "AnswerRelevanceVerdict",
    "ChunkRating",
    "ClaimCheck",
    "ContextRelevance",
    "ContextRelevanceVerdict",
    "Faithfulness",
    "FaithfulnessVerdict",
    "context_relevance_outcome",
    "faithfulness_outcome",
    "user_inputs",
]

MAX_CLAIMS = 40


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimCheck(_Strict):
    claim: str = Field(description="one factual claim of the response, self-contained")
    verdict: Literal["supported", "contradicted", "unsupported"]
    evidence_chunk_id: str | None = Field(
        description="id of the chunk that supports or contradicts the claim; null if none"
    )


class FaithfulnessVerdict(_Strict):
    claims: list[ClaimCheck] = Field(max_length=MAX_CLAIMS)
    justification: str = Field(description="one or two sentences")


class ChunkRating(_Strict):
    chunk_id: str
    reason: str = Field(description="a few words: why it is or is not relevant")
    relevance: float = Field(ge=0, le=1)


class ContextRelevanceVerdict(_Strict):
    chunks: list[ChunkRating] = Field(max_length=32)
    justification: str


class AnswerRelevanceVerdict(_Strict):
    justification: str
    score: float = Field(ge=0, le=1)


def user_inputs(event: Event, max_history: int) -> list[str]:
    """What the user gave: query, case subject/description/metadata values, and the
    user-role messages among the last `max_history` history messages (not the
    assistant's: an earlier invented fact must not ground a later one)."""
    texts = [event.query or ""]
    if event.case is not None:
        texts += [event.case.subject or "", event.case.description or ""]
        meta = (event.case.metadata or {}).values()
        texts += [str(v) for v in meta if isinstance(v, str | int | float)]
    recent = event.history[-max_history:] if max_history else []
    texts += [m.content for m in recent if m.role == "user"]
    return [t for t in texts if t.strip()]


def chunk_labels(event: Event, limit: int) -> list[str]:
    """The shown chunks' ids, sources and titles: they ground an identifier the response
    names (KB0052210 in chunk ``kb0052210-s2`` from ``kb/orbitmail/KB0052210.md``), as
    known texts, never as evidence for the claim's words."""
    out: list[str] = []
    for chunk in event.retrieved_context[:limit]:
        title = (chunk.model_extra or {}).get("title")
        out += [chunk.id, chunk.source or "", title if isinstance(title, str) else ""]
    return [t for t in out if t.strip()]


def _ids(event: Event, limit: int) -> list[str]:
    return [c.id for c in event.retrieved_context[:limit]]


def _claim_key(claim: ClaimCheck) -> str:
    return " ".join(claim.claim.casefold().split())


def faithfulness_outcome(
    verdict: FaithfulnessVerdict, event: Event, limits: PromptLimits, judge: str, call: JudgeCall
) -> MetricOutcome:
    """`faithfulness` from a verdict: claims backed by a shown chunk / claims.

    * A "supported" claim counts only when its `evidence_chunk_id` names a chunk that was
      shown to the judge (the first `limits.max_chunks`); without one, or with an id that
      was never shown, it counts as unsupported and the justification says so.
    * The same claim listed twice (same words, any case) counts once, at its less
      favourable verdict.
    * No claim at all: 1 ("no factual claims") when the response states no facts
      (:func:`~monitors.metrics.sentences.states_facts`: a greeting, a short refusal);
      for a response that does, a judge that finds nothing to check has failed:
      JudgeError `schema_violation`, never a 1."""
    shown = shown_chunk_ids(event.retrieved_context[: limits.max_chunks])

    def backed(c: ClaimCheck) -> bool:
        evidence = c.evidence_chunk_id
        return c.verdict == "supported" and evidence is not None and evidence.strip() in shown

    unique: dict[str, ClaimCheck] = {}
    for claim in verdict.claims:  # a repeated claim counts once, at its least favourable
        first = unique.setdefault(_claim_key(claim), claim)
        if backed(first) and not backed(claim):
            unique[_claim_key(claim)] = claim
    claims = list(unique.values())
    if not claims:
        if states_facts(event.response):
            detail = (
                "no claims extracted from a response that states facts "
                "(a sentence with a number, code or identifier, or "
                f"{SUBSTANTIVE_WORDS}+ words): not scored"
            )
            raise JudgeError("schema_violation", detail, call)
        return scored("faithfulness", 1.0, "no factual claims", judge, call)
    supported = sum(backed(c) for c in claims)
    unbacked = [c for c in claims if c.verdict == "supported" and not backed(c)]
    bad = [c for c in claims if c.verdict != "supported"]
    text = f"{supported}/{len(claims)} claims supported."
    if len(claims) < len(verdict.claims):
        text += f" {len(verdict.claims) - len(claims)} repeated claims counted once."
    if unbacked:
        text += (
            f" {len(unbacked)} claims marked supported without a shown chunk: counted "
            f"unsupported, e.g. {unbacked[0].claim[:120]!r}."
        )
    if bad:
        text += f" {bad[0].verdict}: {bad[0].claim[:160]!r}."
    unknown = sum(
        1
        for c in claims
        if c.verdict != "supported"
        and c.evidence_chunk_id
        and c.evidence_chunk_id.strip() not in shown
    )
    if unknown:
        text += f" {unknown} evidence ids are not shown chunk ids."
    text += f" {verdict.justification}"
    return scored("faithfulness", supported / len(claims), text, judge, call)


def context_relevance_outcome(
    verdict: ContextRelevanceVerdict,
    event: Event,
    limits: PromptLimits,
    judge: str,
    call: JudgeCall,
) -> MetricOutcome:
    """`context_relevance` from a verdict: mean over the shown chunks; raises JudgeError
    (`schema_violation`) when a shown chunk is unrated."""
    ids = _ids(event, limits.max_chunks)
    shown = shown_chunk_ids(event.retrieved_context[: limits.max_chunks])
    ratings: dict[str, ChunkRating] = {}
    for rating in verdict.chunks:  # ratings of ids never shown are ignored
        if rating.chunk_id.strip() in shown:
            ratings.setdefault(shown[rating.chunk_id.strip()], rating)
    unrated = [i for i in ids if i not in ratings]
    if unrated:
        detail = f"{len(unrated)} of {len(ids)} chunks unrated, e.g. {unrated[0][:60]!r}"
        raise JudgeError("schema_violation", detail, call)
    scores = [ratings[i].relevance for i in ids]
    low = min(ids, key=lambda i: ratings[i].relevance)
    text = (
        f"mean relevance of {len(ids)} chunks; least relevant {low[:60]!r} "
        f"({ratings[low].relevance:.2f}: {ratings[low].reason[:120]}). {verdict.justification}"
    )
    return scored("context_relevance", mean(scores), text, judge, call)


@register_metric("faithfulness")
class Faithfulness(TwoPathMetric):
    name = "faithfulness"
    needs = frozenset({"query", "response", "context"})
    outputs = ("faithfulness",)
    prompt_name = "faithfulness"

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits) | {"max_claims": str(MAX_CLAIMS)}
        verdict, call = await ask(judge, self.prompt, FaithfulnessVerdict, fields)
        return [faithfulness_outcome(verdict, event, self.limits, judge.name, call)]

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        contexts = [c.content for c in event.retrieved_context[: self.limits.max_chunks]]
        known = user_inputs(event, self.limits.max_history_messages)
        known += chunk_labels(event, self.limits.max_chunks)
        result, call = await embedded_call(
            judge, self.name, judge.support, event.response, contexts, known
        )
        text = result.justification
        if result.sentences:
            weakest = min(result.sentences, key=lambda s: s[1])
            text = f"{text} weakest sentence ({weakest[1]:.2f}): {weakest[0][:160]!r}".strip()
        return [scored(self.name, result.score, text or "embedded support", judge.name, call)]


@register_metric("context_relevance")
class ContextRelevance(TwoPathMetric):
    name = "context_relevance"
    needs = frozenset({"query", "context"})
    outputs = ("context_relevance",)
    prompt_name = "context_relevance"

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits)
        verdict, call = await ask(judge, self.prompt, ContextRelevanceVerdict, fields)
        return [context_relevance_outcome(verdict, event, self.limits, judge.name, call)]

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        chunks = event.retrieved_context[: self.limits.max_chunks]
        scores, call = await embedded_call(
            judge, self.name, judge.relevance, event.query, [c.content for c in chunks]
        )
        if len(scores) != len(chunks):
            raise JudgeError("internal_error", f"{len(scores)} scores for {len(chunks)} chunks")
        # a score map applies to each chunk (P(on topic)); the score is their mean, the
        # expected share of on-topic chunks, as the LLM path averages its chunk ratings
        mapped: list[float | None] = []
        if isinstance(judge, CalibratedJudge):
            mapped = [judge.calibrate(self.name, s) for s in scores]
        calibrated = bool(mapped) and all(m is not None for m in mapped)
        shown = [float(m) for m in mapped if m is not None] if calibrated else list(scores)
        text = f"mean embedding relevance of {len(chunks)} chunks; " + ", ".join(
            f"{c.id[:40]}={s:.2f}" for c, s in zip(chunks, shown, strict=True)
        )
        out = scored(self.name, mean(shown), text, judge.name, call)
        if calibrated:
            out = replace(out, calibrated=True, raw_score=mean(scores))
        return [out]


@register_metric("answer_relevance")
class AnswerRelevance(TwoPathMetric):
    name = "answer_relevance"
    needs = frozenset({"query", "response"})
    outputs = ("answer_relevance",)
    prompt_name = "answer_relevance"

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        fields = event_fields(event, self.limits)
        verdict, call = await ask(judge, self.prompt, AnswerRelevanceVerdict, fields)
        return [scored(self.name, verdict.score, verdict.justification, judge.name, call)]

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        scores, call = await embedded_call(
            judge, self.name, judge.relevance, event.query, [event.response]
        )
        if len(scores) != 1:
            raise JudgeError("internal_error", f"{len(scores)} scores for one response")
        text = "embedding relevance of the response to the query"
        return [scored(self.name, scores[0], text, judge.name, call)]
