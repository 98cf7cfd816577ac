"""A bundle over the real OpenAI-compatible client and a loopback fault server: one HTTP
call per bundle with its nested strict schema, shared accounting, failures fail closed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from monitors.judges.openai import OpenAIJudge
from monitors.metrics import MetricOutcome, create_metric, distinct_calls
from tests.monitors.judges.fault_server import FaultServer, ok, schema_violating, status
from tests.monitors.metrics.stubs import event
from tests.monitors.metrics.test_bundles import TRIAD


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


def judge_with(server: FaultServer, metric: str) -> list[MetricOutcome]:
    async def go() -> list[MetricOutcome]:
        judge = OpenAIJudge(base_url=server.base_url, model="judge-model", max_attempts=2)
        try:
            result: list[MetricOutcome] = await create_metric(metric)(event(), judge)
            return result
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_rag_triad_is_one_request_with_a_nested_strict_schema(server: FaultServer) -> None:
    server.push(ok(TRIAD, usage=(900, 150)))
    outs = judge_with(server, "rag_triad")
    assert [(o.metric, o.status) for o in outs] == [
        ("faithfulness", "scored"),
        ("context_relevance", "scored"),
        ("answer_relevance", "scored"),
    ]
    (call,) = distinct_calls(outs)
    assert (call.prompt_version, call.attempts) == ("rag_triad/v1", 1)
    assert (call.prompt_tokens, call.completion_tokens) == (900, 150)
    (req,) = server.requests
    schema: dict[str, Any] = req["body"]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["context_relevance", "faithfulness", "answer_relevance"]
    assert schema["additionalProperties"] is False
    assert all(d["additionalProperties"] is False for d in schema["$defs"].values())


@pytest.mark.parametrize(
    ("behaviour", "reason", "requests"),
    [(schema_violating(), "schema_violation", 2), (status(503), "server_error", 2)],
)
def test_a_failed_bundle_call_fails_closed_for_every_output(
    server: FaultServer, behaviour: Any, reason: str, requests: int
) -> None:
    server.default = behaviour
    outs = judge_with(server, "rag_triad")
    assert {o.metric: (o.status, o.score, o.reason) for o in outs} == {
        name: ("judge_error", None, reason)
        for name in ("faithfulness", "context_relevance", "answer_relevance")
    }
    (call,) = distinct_calls(outs)
    assert call.attempts == requests == len(server.requests)
