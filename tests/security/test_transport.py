"""Finding E: a judge key never goes over plain http:// to a remote host by accident.

`http://` to a host that is not loopback, with a key (judge.api_key, headers_from_env or
query_from_env), stops ragpulse at start (exit 2, naming the field) unless
judge.allow_insecure_http is true, and then a WARNING says so. Loopback http:// and
https:// need nothing; neither does http:// without a key.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from monitors.judges.openai import OpenAIJudge
from stream.runtime.judging_build import build_judging
from stream.runtime.settings import ConfigError, load_settings

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-PLANTED-transport-5e8d"
REMOTE = "http://10.0.0.5:8000/v1"


def _config_print(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", "config", "--print"],
        env={**base, **env},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _judge_env(base_url: str, **extra: str) -> dict[str, str]:
    backend = json.dumps({"type": "openai", "base_url": base_url, "model": "m"})
    return {"RAGPULSE_JUDGE__BACKEND": backend, **extra}


KEYED = {
    "api_key": {"RAGPULSE_JUDGE__API_KEY": KEY},
    "headers_from_env": {
        "RAGPULSE_JUDGE__HEADERS_FROM_ENV": '{"api-key": "RP_T_KEY"}',
        "RP_T_KEY": KEY,
    },
    "query_from_env": {
        "RAGPULSE_JUDGE__QUERY_FROM_ENV": '{"subscription-key": "RP_T_KEY"}',
        "RP_T_KEY": KEY,
    },
}


@pytest.mark.parametrize("how", list(KEYED))
def test_a_key_over_http_to_a_remote_host_is_refused(how: str) -> None:
    done = _config_print(_judge_env(REMOTE, **KEYED[how]))
    assert done.returncode == 2, done.stdout
    assert "judge.allow_insecure_http (RAGPULSE_JUDGE__ALLOW_INSECURE_HTTP)" in done.stderr
    assert f"judge.backend.base_url {REMOTE}" in done.stderr and f"judge.{how}" in done.stderr
    assert KEY not in done.stderr


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8000/v1",
        "https://10.0.0.5:8000/v1",
        "https://api.openai.com/v1",
    ],
)
def test_loopback_http_and_https_are_allowed(base_url: str) -> None:
    done = _config_print(_judge_env(base_url, **KEYED["api_key"]))
    assert done.returncode == 0, done.stderr


def test_http_without_a_key_is_allowed() -> None:
    assert _config_print(_judge_env(REMOTE)).returncode == 0


def test_the_flag_allows_it_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    env = _judge_env(REMOTE, **KEYED["api_key"], RAGPULSE_JUDGE__ALLOW_INSECURE_HTTP="true")
    assert _config_print(env).returncode == 0
    settings = load_settings(
        judge={"backend": {"type": "openai", "base_url": REMOTE, "model": "m"}, "api_key": KEY,
               "allow_insecure_http": True, "metrics": ["rag_triad"]},
    )  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="monitors.judges.openai"):
        service = build_judging(settings)
    assert service is not None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("plain http://" in r.getMessage() and REMOTE in r.getMessage() for r in warnings)
    assert KEY not in caplog.text


def test_settings_refuse_it_in_process_too() -> None:
    with pytest.raises(ConfigError, match=r"judge\.allow_insecure_http"):
        load_settings(
            judge={"backend": {"type": "openai", "base_url": REMOTE, "model": "m"}, "api_key": KEY}
        )


@pytest.mark.parametrize(
    "keyed",
    [{"api_key": KEY}, {"secret_headers": {"api-key": KEY}}, {"secret_query": {"sig": KEY}}],
)
def test_the_client_refuses_it_without_the_settings(keyed: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="allow_insecure_http") as info:
        OpenAIJudge(model="m", base_url=REMOTE, **keyed)
    assert KEY not in str(info.value)
    OpenAIJudge(model="m", base_url=REMOTE, allow_insecure_http=True, **keyed)
    OpenAIJudge(model="m", base_url="http://127.0.0.1:1/v1", **keyed)
    OpenAIJudge(model="m", base_url=REMOTE)  # no key: nothing to leak
