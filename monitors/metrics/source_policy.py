"""`source_policy_usage`: quote-only content paraphrased, or no-use content used at all.

Skipped unless the context has a chunk with policy ``quote_only`` or ``no_use``. The score
is compliance: 1 = every restricted chunk respected, 0 = a clear violation; it is the
minimum over the restricted chunks, since one violation makes the turn non-compliant.

* LLM: one call shows the restricted chunks and the response; per chunk the judge says
  ``not_used``, ``quoted_verbatim`` (only inside quotation marks) or ``used_unquoted``
  (paraphrased or copied outside quotes). A ``quote_only`` chunk is respected by the first
  two, a ``no_use`` chunk only by ``not_used``. Every restricted chunk shown must be rated.
* Embedded: the support of each response sentence by the restricted chunks (quoted
  text removed first for ``quote_only``); compliance = 1 - the highest sentence support.
  This is similarity, not entailment: an on-topic sentence that uses nothing from the
  chunk still earns some support, so embedded scores sit below 1 more often.

The `source_policy` rule detector catches verbatim n-gram copies on every turn; this
metric is for paraphrase that shares no long word run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from detectors.lexical import BARRIER, blank_quoted
from monitors.judges.base import EmbeddedJudge, JudgeCall, JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, register_metric
from monitors.metrics.common import TwoPathMetric, ask, embedded_call, scored
from monitors.metrics.prompts import event_fields, format_context, shown_chunk_ids
from monitors.metrics.sentences import sentences
from stream.contract.events import Chunk, Event

__all__ = ["ChunkUse", "SourcePolicyUsage", "SourcePolicyVerdict"]

MAX_SENTENCES = 30
_RESPECTED = {
    "quote_only": {"not_used", "quoted_verbatim"},
    "no_use": {"not_used"},
}


class ChunkUse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    reason: str = Field(description="a few words; quote the offending response words if used")
    verdict: Literal["not_used", "quoted_verbatim", "used_unquoted"]


class SourcePolicyVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunks: list[ChunkUse] = Field(max_length=32)
    justification: str


def _unquoted(text: str) -> str:
    return blank_quoted(text).replace(BARRIER, " ")


@register_metric("source_policy_usage")
class SourcePolicyUsage(TwoPathMetric):
    name = "source_policy_usage"
    needs = frozenset({"response", "context"})
    outputs = ("source_policy_usage",)
    prompt_name = "source_policy_usage"

    def restricted(self, event: Event) -> list[Chunk]:
        """The quote_only / no_use chunks among the first `max_chunks` restricted ones."""
        chunks = [c for c in event.retrieved_context if c.policy in _RESPECTED]
        return chunks[: self.limits.max_chunks]

    def precheck(self, event: Event) -> str | None:
        return None if self.restricted(event) else "no quote_only or no_use chunk"

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        restricted = self.restricted(event)
        fields = event_fields(event, self.limits)
        fields["context"] = format_context(restricted, self.limits)
        verdict, call = await ask(judge, self.prompt, SourcePolicyVerdict, fields)
        return [self.outcome(restricted, verdict, judge.name, call)]

    def outcome(
        self, restricted: list[Chunk], verdict: SourcePolicyVerdict, judge: str, call: JudgeCall
    ) -> MetricOutcome:
        """Compliance from a verdict over `restricted`; raises JudgeError
        (`schema_violation`) when a restricted chunk is unrated."""
        shown = shown_chunk_ids(restricted)
        got: dict[str, ChunkUse] = {}
        for use in verdict.chunks:  # verdicts on ids never shown are ignored
            if use.chunk_id.strip() in shown:
                got.setdefault(shown[use.chunk_id.strip()], use)
        if missing := [c.id for c in restricted if c.id not in got]:
            detail = f"{len(missing)} restricted chunks unrated, e.g. {missing[0][:60]!r}"
            raise JudgeError("schema_violation", detail, call)
        bad = [c for c in restricted if got[c.id].verdict not in _RESPECTED[c.policy]]
        if not bad:
            text = f"{len(restricted)} restricted chunks respected. {verdict.justification}"
            return scored(self.name, 1.0, text, judge, call)
        first = got[bad[0].id]
        text = (
            f"{len(bad)}/{len(restricted)} restricted chunks violated; {bad[0].policy} chunk "
            f"{bad[0].id[:60]!r} {first.verdict}: {first.reason[:160]}"
        )
        return scored(self.name, 0.0, text, judge, call)

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        restricted = self.restricted(event)
        groups = {
            policy: [c.content for c in restricted if c.policy == policy] for policy in _RESPECTED
        }
        views = {"quote_only": _unquoted(event.response), "no_use": event.response}

        def run() -> tuple[float, str, str]:
            worst = (0.0, "", "")  # (support, policy, sentence)
            for policy, contexts in groups.items():
                text = views[policy]
                for start, end in sentences(text, [])[:MAX_SENTENCES] if contexts else []:
                    sentence = " ".join(text[start:end].split())
                    if len(sentence.split()) < 3:
                        continue
                    support = judge.support(sentence, contexts).score
                    if support > worst[0]:
                        worst = (support, policy, sentence)
            return worst

        (support, policy, sentence), call = await embedded_call(judge, self.name, run)
        if not policy:
            text = "no response sentence is supported by a restricted chunk"
        else:
            text = f"highest support by a {policy} chunk {support:.2f}: {sentence[:160]!r}"
        return [scored(self.name, 1.0 - support, text, judge.name, call)]
