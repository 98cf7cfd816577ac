"""Every registered judge metric checked the same way: it builds from its defaults, refuses
a bad option naming it, declares its inputs and outputs, and on the hostile corpus with a
judge that fails every call it never raises and never makes up a score: each output is a
judge_error or skipped (a missing input). Judge metrics keep no state between turns."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import monitors.metrics  # noqa: F401  (registers the built-ins)
from monitors.judges.base import JudgeCall, JudgeError
from monitors.metrics.base import INPUTS, available_metrics, create_metric
from tests.conformance.hostile import hostile_events

NAMES = available_metrics()
EVENTS = hostile_events()
#: the options a metric cannot be built without (its docs name them)
REQUIRED: dict[str, dict[str, Any]] = {"tonality": {"guidelines": ["Answer politely."]}}


class FailingJudge:
    """An LLM judge whose every call fails for good (the protocol of `LLMJudge`)."""

    name = "openai:always-fails"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, system: str, user: str, output: Any, prompt_version: str) -> Any:
        self.calls += 1
        raise JudgeError("invalid_json", "scripted", JudgeCall(self.name, "always-fails"))

    async def aclose(self) -> None:
        return None


def test_the_built_ins_are_all_here() -> None:
    assert {"faithfulness", "answer_relevance", "context_relevance", "rag_triad"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_builds_declares_and_refuses_a_bad_option_naming_it(name: str) -> None:
    metric = create_metric(name, **REQUIRED.get(name, {}))
    assert metric.outputs and set(metric.needs) <= set(INPUTS)
    with pytest.raises(ValueError, match="not_an_option"):
        create_metric(name, not_an_option=1, **REQUIRED.get(name, {}))


@pytest.mark.parametrize("name", NAMES)
def test_a_failing_judge_gives_errors_never_scores_on_the_hostile_corpus(name: str) -> None:
    metric = create_metric(name, **REQUIRED.get(name, {}))
    judge = FailingJudge()

    async def run() -> list[Any]:
        return [await metric(event, judge) for event in EVENTS]  # type: ignore[arg-type]

    results = asyncio.run(run())
    judged = [o for outs in results for o in outs if o.judge == judge.name]
    assert judge.calls > 0 or not any(o.status == "judge_error" for o in judged)
    for event, outcomes in zip(EVENTS, results, strict=True):
        assert {o.metric for o in outcomes} <= set(metric.outputs), event.event_id
        for o in outcomes:
            if o.judge == judge.name:  # a lexical output (no judge) may score on its own
                assert o.status in ("judge_error", "skipped") and o.score is None, o
            else:
                assert o.score is None or 0.0 <= o.score <= 1.0, o
