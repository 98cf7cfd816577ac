"""Failure behaviour of the OpenAI-compatible judge against a real loopback HTTP server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from email.utils import formatdate
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from monitors.judges.base import JudgeError, create_judge
from monitors.judges.breaker import CircuitBreaker
from monitors.judges.openai import OpenAIJudge, is_loopback, redact, strict_schema
from stream.demo import free_port
from stream.platform.retry import Backoff, classify, retry_after_s
from tests.monitors.judges.fault_server import (
    FaultServer,
    drop,
    ok,
    schema_violating,
    slow,
    status,
    truncated,
)


class Verdict(BaseModel):
    score: float = Field(ge=0, le=1)
    justification: str


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


def judge(server: FaultServer, **options: Any) -> OpenAIJudge:
    options.setdefault("model", "judge-model")
    return OpenAIJudge(base_url=server.base_url, **options)


def ask(j: OpenAIJudge, user: str = "Is the answer supported?") -> Any:
    async def go() -> Any:
        try:
            return await j.complete("You grade answers.", user, Verdict, "v1")
        finally:
            await j.aclose()

    return asyncio.run(go())


def fails(j: OpenAIJudge, reason: str) -> JudgeError:
    with pytest.raises(JudgeError) as info:
        ask(j)
    assert info.value.reason == reason, info.value
    assert info.value.call is not None
    return info.value


def test_success_sends_the_protocol_and_accounts(server: FaultServer) -> None:
    server.push(ok({"score": 0.4, "justification": "partly"}, usage=(1200, 300)))
    prices = {"judge-model": {"prompt_per_1k": 0.5, "completion_per_1k": 2.0}}
    reply = ask(judge(server, api_key="sk-test", prices=prices))
    assert reply.parsed == Verdict(score=0.4, justification="partly")
    call = reply.call
    assert (call.judge, call.model, call.prompt_version) == (
        "openai:judge-model",
        "judge-model",
        "v1",
    )
    assert (call.attempts, call.prompt_tokens, call.completion_tokens) == (1, 1200, 300)
    assert call.cost_usd == pytest.approx(1.2 * 0.5 + 0.3 * 2.0)
    assert call.latency_s > 0
    (req,) = server.requests
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    body = req["body"]
    assert body["temperature"] == 0 and body["model"] == "judge-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["score", "justification"]


def test_5xx_is_retried_and_counted(server: FaultServer) -> None:
    server.push(status(500), status(503), ok(usage=(10, 5)))
    reply = ask(judge(server))
    assert reply.call.attempts == 3 and len(server.requests) == 3
    assert (reply.call.prompt_tokens, reply.call.completion_tokens) == (10, 5)


def test_429_retry_after_goes_to_backoff_sleep(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[tuple[float, float | None]] = []

    async def record(delay: float, retry_after: float | None = None) -> None:
        waits.append((delay, retry_after))

    monkeypatch.setattr(Backoff, "sleep", staticmethod(record))
    server.push(status(429, retry_after="7"), status(500), ok())
    reply = ask(judge(server))
    assert reply.call.attempts == 3
    assert [w[1] for w in waits] == [7.0, None]  # Retry-After only for the 429


def test_retry_after_is_waited_for_real(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Backoff, "scale", 1.0)
    server.push(status(429, retry_after="1"), ok())
    reply = ask(judge(server, backoff={"initial_s": 0.01, "jitter": 0}))
    first, second = server.requests
    assert reply.call.attempts == 2
    assert 1.0 <= second["at"] - first["at"] < 3.0


def test_retry_after_past_the_deadline_gives_up(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Backoff, "scale", 1.0)
    server.push(status(429, retry_after="30"))
    started = time.monotonic()
    fails(judge(server, max_total_s=5, backoff={"initial_s": 0.01}), "rate_limited")
    assert time.monotonic() - started < 3 and len(server.requests) == 1


def test_server_errors_exhaust_the_attempts(server: FaultServer) -> None:
    server.push(*[status(502)] * 5)
    err = fails(judge(server, max_attempts=3), "server_error")
    assert err.call is not None and err.call.attempts == 3 and len(server.requests) == 3
    assert "502" in err.detail


@pytest.mark.parametrize("code", [400, 401, 404, 413])
def test_4xx_gives_up_at_once(server: FaultServer, code: int) -> None:
    server.push(status(code), ok())
    err = fails(judge(server), "client_error")
    assert err.call is not None and err.call.attempts == 1 and len(server.requests) == 1


def test_truncated_json_is_retried_with_a_correction(server: FaultServer) -> None:
    server.push(truncated(usage=(100, 50)), ok(usage=(130, 20)))
    reply = ask(judge(server))
    assert reply.call.attempts == 2
    assert (reply.call.prompt_tokens, reply.call.completion_tokens) == (230, 70)  # both paid
    retry = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert "max_tokens" in retry[3]["content"]


def test_invalid_json_fails_closed(server: FaultServer) -> None:
    server.push(ok("I think it is fine, score 0.9"), truncated(), truncated())
    err = fails(judge(server, max_attempts=3), "invalid_json")
    assert err.call is not None and err.call.attempts == 3
    assert err.call.prompt_tokens == 300  # tokens of failed attempts are still accounted


def test_schema_violation_fails_closed(server: FaultServer) -> None:
    server.push(*[schema_violating()] * 2)
    err = fails(judge(server, max_attempts=2), "schema_violation")
    assert "score" in err.detail and len(server.requests) == 2


def test_out_of_range_score_is_not_accepted(server: FaultServer) -> None:
    server.push(ok({"score": 1.7, "justification": "x"}), ok({"score": 1, "justification": "x"}))
    reply = ask(judge(server))
    assert reply.parsed.score == 1 and reply.call.attempts == 2


def test_fenced_json_is_accepted(server: FaultServer) -> None:
    server.push(ok('```json\n{"score": 0.5, "justification": "ok"}\n```'))
    assert ask(judge(server)).parsed.score == 0.5


def test_dropped_connection_is_retried(server: FaultServer) -> None:
    server.push(drop(), ok())
    assert ask(judge(server)).call.attempts == 2
    server.push(drop(), drop())
    fails(judge(server, max_attempts=2), "server_error")


def test_attempt_timeout(server: FaultServer) -> None:
    server.push(slow(0.5), ok())
    reply = ask(judge(server, timeout_s=0.2))
    assert reply.call.attempts == 2
    server.push(slow(2), slow(2))
    started = time.monotonic()
    fails(judge(server, timeout_s=0.2, max_attempts=2), "timeout")
    assert time.monotonic() - started < 3.0  # 2 x slow(2) would take 4 s


def test_total_time_bound(server: FaultServer) -> None:
    server.default = slow(1)
    started = time.monotonic()
    err = fails(judge(server, timeout_s=0.3, max_attempts=50, max_total_s=0.7), "timeout")
    assert time.monotonic() - started < 2.5  # 50 x 0.3 s attempts without the bound
    assert err.call is not None and 2 <= err.call.attempts <= 3


def test_connect_error() -> None:
    j = OpenAIJudge(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", max_attempts=2)
    err = fails(j, "connect_error")
    assert err.call is not None and err.call.attempts == 2


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_breaker_opens_fails_fast_half_opens_and_closes(server: FaultServer) -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(failure_threshold=2, reset_after_s=30, clock=clock)
    j = judge(server, max_attempts=1, breaker=breaker)
    server.push(status(500), status(500))

    async def go() -> list[str]:
        reasons = []
        for _ in range(3):
            try:
                await j.complete("s", "u", Verdict, "v1")
                reasons.append("ok")
            except JudgeError as err:
                reasons.append(err.reason)
        assert breaker.state == "open" and len(server.requests) == 2  # the 3rd never went out
        clock.now += 31
        assert breaker.state == "half_open"
        server.push(slow(0.2))  # the probe; a concurrent call meanwhile fails fast
        results = await asyncio.gather(
            j.complete("s", "u", Verdict, "v1"),
            j.complete("s", "u", Verdict, "v1"),
            return_exceptions=True,
        )
        reasons += [r.reason if isinstance(r, JudgeError) else "ok" for r in results]
        assert breaker.state == "closed" and len(server.requests) == 3
        await j.aclose()
        return reasons

    assert asyncio.run(go()) == [
        "server_error",
        "server_error",
        "circuit_open",
        "ok",
        "circuit_open",
    ]


def test_failed_probe_reopens_and_content_errors_do_not_count(server: FaultServer) -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(failure_threshold=1, reset_after_s=5, clock=clock)
    server.push(status(503))
    fails(judge(server, max_attempts=1, breaker=breaker), "server_error")
    assert breaker.state == "open" and breaker.opened_total == 1
    clock.now += 6
    server.push(drop())
    fails(judge(server, max_attempts=1, breaker=breaker), "server_error")
    assert breaker.state == "open" and breaker.opened_total == 2
    fails(judge(server, max_attempts=1, breaker=breaker), "circuit_open")
    clock.now += 6
    server.push(schema_violating())  # the endpoint answered: the model is at fault
    fails(judge(server, max_attempts=1, breaker=breaker), "schema_violation")
    assert breaker.state == "closed"


def test_concurrency_is_bounded(server: FaultServer) -> None:
    server.default = slow(0.15)
    j = judge(server, concurrency=3)

    async def go() -> None:
        await asyncio.gather(*[j.complete("s", f"u{i}", Verdict, "v1") for i in range(10)])
        await j.aclose()

    asyncio.run(go())
    assert len(server.requests) == 10 and server.max_in_flight == 3


def test_unsupported_response_format_falls_back_and_is_remembered(server: FaultServer) -> None:
    server.push(
        status(400, body="response_format type json_schema is not supported"),
        status(422, body="unexpected key 'schema' in response_format"),
        ok(),
        ok(),
    )
    j = judge(server, max_attempts=1)

    async def go() -> None:
        await j.complete("s", "u", Verdict, "v1")
        await j.complete("s", "u", Verdict, "v1")
        await j.aclose()

    asyncio.run(go())
    types = [r["body"]["response_format"]["type"] for r in server.requests]
    assert types == ["json_schema", "json_object", "json_object", "json_object"]
    assert "schema" in server.requests[1]["body"]["response_format"]
    assert "schema" not in server.requests[2]["body"]["response_format"]
    assert '"justification"' in server.requests[3]["body"]["messages"][0]["content"]
    assert j.response_format == "json_object"


def test_400_about_something_else_does_not_downgrade(server: FaultServer) -> None:
    server.push(status(400, body="maximum context length exceeded"))
    j = judge(server)
    fails(j, "client_error")
    assert j.response_format == "json_schema"


def test_azure_path_query_and_key_header(server: FaultServer) -> None:
    base = server.base_url.removesuffix("/v1")
    azure = {"deployment": "grader-prod", "api_version": "2024-10-21"}
    ask(OpenAIJudge(model="gpt-4o-mini", base_url=base, api_key="az-key", azure=azure))
    (req,) = server.requests
    assert req["path"] == "/openai/deployments/grader-prod/chat/completions"
    assert req["query"] == {"api-version": "2024-10-21"}
    assert req["headers"]["api-key"] == "az-key" and "Authorization" not in req["headers"]


def test_extra_headers_and_query(server: FaultServer) -> None:
    ask(judge(server, extra_headers={"X-Tenant": "t1"}, extra_query={"trace": "1"}))
    (req,) = server.requests
    assert req["headers"]["X-Tenant"] == "t1" and req["query"] == {"trace": "1"}


def test_pii_redaction(server: FaultServer) -> None:
    text = "Mail jane.doe@example.com, call +44 20 7946 0958, card 4242 4242 4242 4242."
    assert not judge(server).redact_pii  # loopback: off by default
    ask(judge(server, redact_pii=True), user=text)
    sent = server.requests[0]["body"]["messages"][1]["content"]
    assert "jane.doe" not in sent and "7946" not in sent and "4242 4242" not in sent
    assert "[email redacted]" in sent and "[payment_card redacted]" in sent
    assert redact("no personal data here") == "no personal data here"


def test_loopback_detection() -> None:
    assert is_loopback("http://127.0.0.1:8080/v1") and is_loopback("http://localhost/v1")
    assert is_loopback("http://[::1]:1/v1")
    assert not is_loopback("https://api.openai.com/v1")
    assert not is_loopback("http://10.0.0.5:8000/v1")
    assert OpenAIJudge(model="m").redact_pii


def test_registered_and_key_kept_secret() -> None:
    j = create_judge("openai", model="gpt-4o-mini", api_key="sk-secret-value")
    assert isinstance(j, OpenAIJudge) and j.name == "openai:gpt-4o-mini"
    assert "sk-secret" not in repr(j)


def test_strict_schema_closes_nested_objects() -> None:
    class Claim(BaseModel):
        text: str
        supported: bool = False

    class Claims(BaseModel):
        claims: list[Claim]

    schema = strict_schema(Claims.model_json_schema())
    claim = schema["$defs"]["Claim"]
    assert claim["additionalProperties"] is False and claim["required"] == ["text", "supported"]
    assert "default" not in claim["properties"]["supported"]


def test_classify_http_errors() -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")

    def status_error(code: int) -> httpx.HTTPStatusError:
        response = httpx.Response(code, request=request)
        return httpx.HTTPStatusError("x", request=request, response=response)

    assert classify(httpx.ConnectError("refused")) == "retry"
    assert classify(httpx.ReadTimeout("slow")) == "retry"
    assert classify(httpx.RemoteProtocolError("dropped")) == "retry"
    assert classify(httpx.UnsupportedProtocol("ftp")) == "give_up"
    assert classify(status_error(429)) == "rate_limit"
    assert classify(status_error(408)) == "retry"
    assert classify(status_error(503)) == "retry"
    assert classify(status_error(422)) == "give_up"


def test_retry_after_parsing() -> None:
    assert retry_after_s({"Retry-After": "5"}) == 5.0
    assert retry_after_s({"retry-after-ms": "250", "Retry-After": "1"}) == 0.25
    now = time.time()
    assert 9 <= (retry_after_s({"Retry-After": formatdate(now + 10, usegmt=True)}, now) or 0) <= 10
    assert retry_after_s({"Retry-After": formatdate(now - 10, usegmt=True)}, now) == 0.0
    assert retry_after_s({"Retry-After": "soon"}) is None
    assert retry_after_s({}) is None


def test_concurrent_rejections_step_down_once(server: FaultServer) -> None:
    rejected = status(400, body="'json_schema' is not a valid response_format type")
    server.push(rejected, rejected, ok(), ok())
    j = judge(server, concurrency=2)

    async def go() -> None:
        await asyncio.gather(*[j.complete("s", "u", Verdict, "v1") for _ in range(2)])
        await j.aclose()

    asyncio.run(go())
    assert j.response_format == "json_object_schema"
    assert all("schema" in r["body"]["response_format"] for r in server.requests[2:])
