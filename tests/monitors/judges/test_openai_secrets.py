"""The OpenAI judge keeps its secrets: secret headers and query parameters are sent, and
neither they, the key nor any URL query string reach repr, error details or log lines."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, Field, SecretStr

from monitors.judges.base import JudgeError
from monitors.judges.openai import OpenAIJudge
from monitors.judges.openai_wire import Scrubber, public_url, strip_queries
from monitors.judges.settings import JudgeSettings, looks_like_credential
from tests.monitors.judges.fault_server import FaultServer, status

KEY = "sk-PLANTED-key-31c9"
HEADER = "PLANTED-header-8d2f"
QUERY = "PLANTED-query-a41e"


class Verdict(BaseModel):
    score: float = Field(ge=0, le=1)
    justification: str


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


def _judge(server: FaultServer, **options: Any) -> OpenAIJudge:
    return OpenAIJudge(
        model="m",
        base_url=server.base_url,
        api_key=KEY,
        secret_headers={"X-Gateway-Token": SecretStr(HEADER)},
        secret_query={"subscription-key": QUERY},
        max_attempts=1,
        **options,
    )


def _ask(judge: OpenAIJudge) -> Any:
    async def go() -> Any:
        try:
            return await judge.complete("s", "u", Verdict, "v1")
        except JudgeError as err:
            return err
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_secret_headers_and_query_are_sent(server: FaultServer) -> None:
    _ask(_judge(server))
    (req,) = server.requests
    assert req["headers"]["X-Gateway-Token"] == HEADER
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    assert req["query"] == {"subscription-key": QUERY}


def test_an_error_echoing_the_secrets_is_scrubbed(server: FaultServer) -> None:
    echo = f"denied {KEY} {HEADER} at {server.base_url}/chat/completions?subscription-key={QUERY}"
    for code in (401, 500):
        server.push(status(code, body=echo))
        err = _ask(_judge(server))
        assert isinstance(err, JudgeError)
        for secret in (KEY, HEADER, QUERY):
            assert secret not in err.detail and secret not in str(err)
        assert "[redacted]" in err.detail


def test_httpx_request_lines_carry_no_query_string(
    server: FaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Even when a host application logs httpx at INFO (the CLI sets it to WARNING)."""
    with caplog.at_level(logging.INFO, logger="httpx"):
        _ask(_judge(server))
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert lines and all("HTTP Request: POST" in line for line in lines)
    assert not any(QUERY in line or "subscription-key" in line for line in lines)


def test_the_cli_quiets_httpx_at_every_level() -> None:
    from stream.cli import _setup_logging

    names = ("httpx", "httpcore", "faust", "mode", "aiokafka", "kafka")
    saved = {name: logging.getLogger(name).level for name in names}
    try:
        for level in ("DEBUG", "INFO"):
            _setup_logging(level)
            assert logging.getLogger("httpx").getEffectiveLevel() == logging.WARNING
            assert logging.getLogger("httpcore").getEffectiveLevel() == logging.WARNING
    finally:
        for name, was in saved.items():
            logging.getLogger(name).setLevel(was)


def test_repr_shows_no_user_info_query_or_key() -> None:
    judge = OpenAIJudge(model="m", base_url=f"https://u:{KEY}@judge.example:8443/v1?sig={QUERY}")
    assert repr(judge) == "OpenAIJudge(model='m', base_url='https://judge.example:8443/v1')"
    assert public_url("http://[::1]:9/v1?x=1#f") == "http://[::1]:9/v1"


def test_strip_queries_and_scrubber() -> None:
    text = f"POST https://h/v1/chat/completions?subscription-key={QUERY} 'http://x/?a=1' httpx"
    assert strip_queries(text) == (
        "POST https://h/v1/chat/completions?[query redacted] 'http://x/?[query redacted]' httpx"
    )
    assert Scrubber([KEY, ""])(f"key {KEY}, again {KEY}") == "key [redacted], again [redacted]"
    hostile = "http" * 100_000 + "http://" * 10_000  # linear, whatever the text
    assert strip_queries(hostile).startswith("httphttp")


@pytest.mark.parametrize(
    "name",
    [
        "api_key", "API-KEY", "api-key", "apikey", "x-api-key", "Ocp-Apim-Subscription-Key",
        "subscription-key", "Authorization", "Proxy-Authorization", "password", "client_secret",
        "token", "X-Auth-Token", "access_token", "id-token", "credentials", "Cookie",
    ],
)  # fmt: skip
def test_credential_names(name: str) -> None:
    assert looks_like_credential(name)


@pytest.mark.parametrize(
    "name",
    ["max_tokens", "max_completion_tokens", "model", "base_url", "api-version", "timeout_s",
     "OpenAI-Organization", "OpenAI-Project", "X-Tenant", "prices", "keyword", "response_format"],
)  # fmt: skip
def test_not_credential_names(name: str) -> None:
    assert not looks_like_credential(name)


def test_settings_keep_env_secrets_out_of_dumps_and_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RP_T_HDR", HEADER)
    monkeypatch.setenv("RP_T_Q", QUERY)
    js = JudgeSettings(
        backend="openai",
        headers_from_env={"api-key": "RP_T_HDR"},
        query_from_env={"subscription-key": "RP_T_Q"},
    )
    assert js.secret_headers()["api-key"].get_secret_value() == HEADER
    assert js.secret_query()["subscription-key"].get_secret_value() == QUERY
    for shown in (repr(js), str(js), js.model_dump_json(), str(js.model_dump())):
        assert HEADER not in shown and QUERY not in shown


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("headers_from_env", {"api key": "X"}, "not a valid HTTP header name"),
        ("headers_from_env", {"api-key": "1BAD"}, "not an environment variable name"),
        ("query_from_env", {"sig": "RP_T_UNSET_VAR"}, "RP_T_UNSET_VAR is not set"),
    ],
)
def test_from_env_is_checked(field: str, value: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JudgeSettings(backend="openai", **{field: value})
