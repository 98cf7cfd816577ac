"""What every built-in judge metric shares: input checks, the two judge paths, outcomes.

:class:`TwoPathMetric` implements the `JudgeMetric` protocol once: it skips the metric
when an input is missing, dispatches to the LLM path (:meth:`with_llm`) or the embedded
path (:meth:`with_embedded`) by the kind of judge, and turns a :class:`JudgeError` into
one ``judge_error`` outcome per output — never a score. The embedded judge is synchronous
and CPU-bound, so its calls run in a worker thread (:func:`embedded_call`) and the event
loop stays free; it must therefore be safe to call from several threads.

The outcomes of one judge call share one :class:`JudgeCall` object (the case-aware suite
produces nine scores from one call): count calls with :func:`distinct_calls`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel

from monitors.judges.base import CalibratedJudge, EmbeddedJudge, JudgeCall, JudgeError, LLMJudge
from monitors.metrics.base import MetricOutcome, missing_inputs
from monitors.metrics.prompts import Prompt, PromptLimits, load_prompt
from stream.contract.events import Event

__all__ = [
    "JUSTIFICATION_CHARS",
    "TwoPathMetric",
    "ask",
    "calibrated",
    "combine_calls",
    "distinct_calls",
    "embedded_call",
    "errored",
    "mean",
    "scored",
    "skipped",
]

JUSTIFICATION_CHARS = 500
M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= JUSTIFICATION_CHARS else text[: JUSTIFICATION_CHARS - 3] + "..."


def scored(
    metric: str, score: float, justification: str, judge: str, call: JudgeCall | None = None
) -> MetricOutcome:
    value = min(1.0, max(0.0, float(score)))
    return MetricOutcome(metric, "scored", value, _short(justification), judge, None, call)


def skipped(outputs: Iterable[str], reason: str, judge: str) -> list[MetricOutcome]:
    return [MetricOutcome(name, "skipped", judge=judge, reason=reason) for name in outputs]


def errored(outputs: Iterable[str], err: JudgeError, judge: str) -> list[MetricOutcome]:
    detail = _short(err.detail)
    return [
        MetricOutcome(name, "judge_error", None, detail, judge, err.reason, err.call)
        for name in outputs
    ]


def calibrated(outcomes: list[MetricOutcome], judge: object) -> list[MetricOutcome]:
    """`outcomes` with each scored score replaced by the judge's calibrated one, where the
    judge has a score map for that metric (:class:`~monitors.judges.base.CalibratedJudge`);
    the raw score is kept as ``raw_score``. Other outcomes are returned unchanged."""
    if not isinstance(judge, CalibratedJudge):
        return outcomes
    out = []
    for o in outcomes:
        if o.calibrated or o.status != "scored" or o.score is None:
            out.append(o)  # already calibrated by the metric itself, or nothing to map
            continue
        value = judge.calibrate(o.metric, o.score)
        if value is not None:
            o = replace(o, score=min(1.0, max(0.0, value)), calibrated=True, raw_score=o.score)
        out.append(o)
    return out


def combine_calls(first: JudgeCall, second: JudgeCall) -> JudgeCall:
    """The accounting of one logical call made of two LLM calls (a two-step metric)."""
    return replace(
        second,
        prompt_tokens=first.prompt_tokens + second.prompt_tokens,
        completion_tokens=first.completion_tokens + second.completion_tokens,
        latency_s=first.latency_s + second.latency_s,
        cost_usd=first.cost_usd + second.cost_usd,
        attempts=first.attempts + second.attempts,
    )


def distinct_calls(outcomes: Iterable[MetricOutcome]) -> list[JudgeCall]:
    """The judge calls behind `outcomes`, each once (outcomes of one call share it)."""
    seen: dict[int, JudgeCall] = {}
    for outcome in outcomes:
        if outcome.call is not None:
            seen.setdefault(id(outcome.call), outcome.call)
    return list(seen.values())


async def ask(
    judge: LLMJudge, prompt: Prompt, output: type[M], fields: dict[str, str]
) -> tuple[M, JudgeCall]:
    """One LLM judge call with the rendered prompt; raises JudgeError on failure."""
    system, user = prompt.render(**fields)
    reply = await judge.complete(system, user, output, prompt.key)
    return reply.parsed, reply.call


async def embedded_call(
    judge: EmbeddedJudge, metric: str, fn: Callable[..., R], *args: Any
) -> tuple[R, JudgeCall]:
    """Run a synchronous embedded-judge method in a thread, with its accounting."""
    start = time.perf_counter()
    result = await asyncio.to_thread(fn, *args)
    call = JudgeCall(
        judge=judge.name,
        model=judge.name,
        prompt_version=f"{metric}/embedded",
        latency_s=time.perf_counter() - start,
        attempts=1,
    )
    return result, call


class TwoPathMetric:
    """Base of the built-in metrics: subclasses set `needs`/`outputs`/`prompt_name`."""

    name: str
    needs: frozenset[str] = frozenset()
    outputs: tuple[str, ...] = ()
    prompt_name: str = ""
    #: only an LLM judge can compute it: the embedded judge skips it with this reason
    llm_only: bool = False

    def __init__(
        self,
        *,
        prompt_version: str = "v1",
        prompt_dir: str | None = None,
        limits: PromptLimits | dict[str, Any] | None = None,
    ) -> None:
        self.limits = PromptLimits.model_validate(limits or {})
        self.prompt = load_prompt(self.prompt_name, prompt_version, prompt_dir)

    def precheck(self, event: Event) -> str | None:
        """A reason to skip beyond missing inputs (e.g. no restricted chunk), else None."""
        return None

    async def __call__(self, event: Event, judge: LLMJudge | EmbeddedJudge) -> list[MetricOutcome]:
        outcomes = await self._outcomes(event, judge)
        if "reference" in self.needs:  # exported apart from the population (base.py)
            outcomes = [replace(o, reference_based=True) for o in outcomes]
        return outcomes

    async def _outcomes(self, event: Event, judge: LLMJudge | EmbeddedJudge) -> list[MetricOutcome]:
        name = judge.name
        reference = event.reference if "reference" in self.needs else None
        if reference is not None and reference.problems:
            return skipped(self.outputs, reference.problems[0], name)
        missing = missing_inputs(event, self.needs)
        if missing:
            return skipped(self.outputs, "missing: " + ", ".join(missing), name)
        reason = self.precheck(event)
        if reason:
            return skipped(self.outputs, reason, name)
        try:
            if isinstance(judge, LLMJudge):
                return await self.with_llm(event, judge)
            if isinstance(judge, EmbeddedJudge):
                if self.llm_only:
                    return skipped(self.outputs, "requires an LLM judge", name)
                return calibrated(await self.with_embedded(event, judge), judge)
        except JudgeError as err:
            return errored(self.outputs, err, name)
        raise TypeError(f"{type(judge).__name__} is neither an LLMJudge nor an EmbeddedJudge")

    async def with_llm(self, event: Event, judge: LLMJudge) -> list[MetricOutcome]:
        raise NotImplementedError

    async def with_embedded(self, event: Event, judge: EmbeddedJudge) -> list[MetricOutcome]:
        raise NotImplementedError


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)
