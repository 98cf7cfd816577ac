"""Citation metrics: are citations right (`citation_accuracy`) and present (`citation_coverage`).

* ``citation_accuracy`` (needs response, citations, context): every sentence carrying a
  declared marker is a unit; do the chunks its citations point at support it? LLM: one
  call over all units (supported 1, partial 0.5, unsupported 0); embedded:
  ``support(sentence, cited chunks)``. A unit whose citations resolve to no retrieved
  chunk scores 0 without asking. Score = mean over units; skipped when the response
  carries no declared marker.
* ``citation_coverage`` (needs response; no judge): the share of *factual* sentences
  that carry a marker. A sentence is factual when it has at least 4 words, is not a
  question, and contains a digit, inline code, an identifier-like token (``/``, ``_``,
  ``a.b``) or a capitalised word after its first word (a name). Skipped when the
  response has no factual sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from detectors.citations import normalize_marker
from monitors.judges.base import EmbeddedJudge, JudgeCall, JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, missing_inputs, register_metric
from monitors.metrics.common import TwoPathMetric, ask, embedded_call, mean, scored, skipped
from monitors.metrics.prompts import clip, format_context, tag
from monitors.metrics.sentences import (
    find_markers,
    is_factual,
    looks_like_citation,
    sentences,
    strip_markers,
)
from stream.contract.events import Chunk, Event

__all__ = [
    "MAX_UNITS",
    "CitationAccuracy",
    "CitationAccuracyVerdict",
    "CitationCoverage",
    "CitationItem",
    "citation_units",
]

MAX_UNITS = 24
MAX_SENTENCE_CHARS = 300
_VERDICT_SCORE = {"supported": 1.0, "partial": 0.5, "unsupported": 0.0}


class CitationItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    reason: str = Field(description="a few words")
    verdict: Literal["supported", "partial", "unsupported"]


class CitationAccuracyVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[CitationItem] = Field(max_length=MAX_UNITS)
    justification: str


@dataclass
class _Unit:
    sentence: str
    chunks: list[Chunk] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def citation_units(event: Event) -> list[_Unit]:
    """The cited sentences of the response (at most MAX_UNITS), with the chunks they cite."""
    by_key: dict[str, list[str]] = {}
    for cit in event.citations:
        for key in (cit.marker or "").split(","):
            if key.strip():
                by_key.setdefault(normalize_marker(key), []).append((cit.source_id or "").strip())
    chunks = {c.id.strip(): c for c in event.retrieved_context}
    text = event.response
    markers = [m for m in find_markers(text) if any(k in by_key for k in m.keys)]
    units = []
    for start, end in sentences(text, markers):
        inside = [m for m in markers if start <= m.start < end]
        if not inside:
            continue
        unit = _Unit(strip_markers(text, start, end, inside))
        for sid in dict.fromkeys(s for m in inside for k in m.keys for s in by_key.get(k, [])):
            if sid in chunks:
                unit.chunks.append(chunks[sid])
            else:
                unit.unresolved.append(sid)
        units.append(unit)
    return units[:MAX_UNITS]


@register_metric("citation_accuracy")
class CitationAccuracy(TwoPathMetric):
    name = "citation_accuracy"
    needs = frozenset({"response", "citations", "context"})
    outputs = ("citation_accuracy",)
    prompt_name = "citation_accuracy"

    def precheck(self, event: Event) -> str | None:
        return None if citation_units(event) else "no citation markers in response"

    def _finish(self, units: list[_Unit], scores: dict[int, float], note: str) -> tuple[float, str]:
        values = [scores.get(i, 0.0) for i in range(len(units))]
        worst = min(range(len(units)), key=values.__getitem__)
        text = f"{sum(v >= 1 for v in values)}/{len(units)} cited sentences fully supported"
        if values[worst] < 1:
            why = "cites no retrieved chunk" if not units[worst].chunks else "not supported"
            text += f"; {why}: {units[worst].sentence[:160]!r}"
        return mean(values), f"{text}. {note}"

    def items_prompt(self, units: list[_Unit]) -> tuple[list[Chunk], str]:
        """The cited chunks and the ``<item>`` lines of the units that cite one."""
        asked = [i for i, u in enumerate(units) if u.chunks]
        cited = list({c.id: c for i in asked for c in units[i].chunks}.values())
        items = "\n".join(
            tag(
                "item",
                clip(units[i].sentence, MAX_SENTENCE_CHARS),
                index=str(i),
                cites=", ".join(c.id for c in units[i].chunks),
            )
            for i in asked
        )
        return cited, items

    def outcome(
        self,
        units: list[_Unit],
        verdict: CitationAccuracyVerdict | None,
        judge: str,
        call: JudgeCall | None,
    ) -> MetricOutcome:
        """The score from a verdict over the asked units (None: no unit was asked);
        raises JudgeError (`schema_violation`) when an asked unit is unrated."""
        asked = [i for i, u in enumerate(units) if u.chunks]
        scores: dict[int, float] = {}
        note = ""
        if verdict is not None:
            got = {it.index: _VERDICT_SCORE[it.verdict] for it in verdict.items}
            if missing := [i for i in asked if i not in got]:
                raise JudgeError("schema_violation", f"items {missing[:5]} unrated", call)
            scores = {i: got[i] for i in asked}
            note = verdict.justification
        score, text = self._finish(units, scores, note)
        return scored(self.name, score, text, judge, call)

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        units = citation_units(event)
        if not any(u.chunks for u in units):
            return [self.outcome(units, None, judge.name, None)]
        cited, items = self.items_prompt(units)
        fields = {"context": format_context(cited, self.limits), "items": items}
        verdict, call = await ask(judge, self.prompt, CitationAccuracyVerdict, fields)
        return [self.outcome(units, verdict, judge.name, call)]

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        units = citation_units(event)

        def run() -> dict[int, float]:
            return {
                i: judge.support(u.sentence, [c.content for c in u.chunks]).score
                for i, u in enumerate(units)
                if u.chunks
            }

        scores, call = await embedded_call(judge, self.name, run)
        score, text = self._finish(units, scores, "embedded support of each cited sentence")
        return [scored(self.name, score, text, judge.name, call)]


@register_metric("citation_coverage")
class CitationCoverage:
    """Share of factual sentences carrying a citation marker; lexical, no judge."""

    name = "citation_coverage"
    needs = frozenset({"response"})
    outputs = ("citation_coverage",)
    judge_name = "lexical-v1"

    async def __call__(self, event: Event, judge: object = None) -> list[MetricOutcome]:
        missing = missing_inputs(event, self.needs)
        if missing:
            return skipped(self.outputs, "missing: " + ", ".join(missing), self.judge_name)
        text = event.response
        declared = {
            normalize_marker(k) for c in event.citations for k in (c.marker or "").split(",")
        }
        markers = [m for m in find_markers(text) if looks_like_citation(text, m, declared)]
        factual = cited = 0
        first_uncited = ""
        for start, end in sentences(text, markers):
            if not is_factual(strip_markers(text, start, end, markers)):
                continue
            factual += 1
            if any(start <= m.start < end for m in markers):
                cited += 1
            elif not first_uncited:
                first_uncited = text[start:end]
        if not factual:
            return skipped(self.outputs, "no factual sentences", self.judge_name)
        why = f"{cited}/{factual} factual sentences carry a citation marker"
        if first_uncited:
            why += f"; uncited: {first_uncited[:160]!r}"
        return [scored(self.name, cited / factual, why, self.judge_name)]
