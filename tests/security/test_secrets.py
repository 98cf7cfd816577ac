"""Findings C and D: judge secrets never reach the configuration output, the manifests,
the logs or the metrics.

Secrets are planted where they belong (the API key in RAGPULSE_JUDGE__API_KEY, a header
through judge.headers_from_env, a query parameter through judge.query_from_env), a real
`ragpulse run` sidecar judges real events against a loopback judge server at DEBUG log
level (the server even echoes them back in an error body), and every line it printed,
`ragpulse config --print` and the rendered chart are searched for them. A secret planted
in judge.options is refused at start (exit 2) naming the field, without echoing it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import helm_python as helm
import pytest

from stream.demo import generate
from tests.conftest import Topics, produce
from tests.helm.manifests import CHART, render
from tests.monitors.judges.fault_server import FaultServer, status

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-PLANTED-api-key-7f3a91"
HEADER = "PLANTED-header-value-9c2e44"
QUERY = "PLANTED-query-value-4b1d07"
PLANTED = (KEY, HEADER, QUERY)

SECRET_ENV = {
    "RAGPULSE_JUDGE__API_KEY": KEY,
    "RAGPULSE_JUDGE__HEADERS_FROM_ENV": json.dumps({"X-Gateway-Token": "RP_TEST_GW_TOKEN"}),
    "RP_TEST_GW_TOKEN": HEADER,
    "RAGPULSE_JUDGE__QUERY_FROM_ENV": json.dumps({"subscription-key": "RP_TEST_APIM_KEY"}),
    "RP_TEST_APIM_KEY": QUERY,
}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


def _ragpulse(
    *args: str, env: dict[str, str], cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        env={**base, "RAGPULSE_LOG_LEVEL": "DEBUG", **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _assert_clean(text: str, where: str) -> None:
    for secret in PLANTED:
        assert secret not in text, f"{secret} in {where}"
    assert "subscription-key=" not in text, f"a query string in {where}"


def test_config_print_shows_no_planted_secret(server: FaultServer) -> None:
    env = {
        **SECRET_ENV,
        "RAGPULSE_JUDGE__BACKEND": json.dumps(
            {"type": "openai", "base_url": server.base_url, "model": "m"}
        ),
    }
    for fmt in ("yaml", "json"):
        done = _ragpulse("config", "--print", "--format", fmt, env=env)
        assert done.returncode == 0, done.stderr
        _assert_clean(done.stdout + done.stderr, f"config --print --format {fmt}")
        assert "RP_TEST_GW_TOKEN" in done.stdout  # the variable's name is shown, not its value


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"extra_headers": {"api-key": KEY}}, "judge.backend.extra_headers.api-key"),
        ({"api_key": KEY}, "judge.backend.api_key"),
        ({"extra_query": {"subscription-key": KEY}}, "judge.backend.extra_query.subscription-key"),
        ({"extra_headers": {"Ocp-Apim-Subscription-Key": KEY}}, "Ocp-Apim-Subscription-Key"),
        ({"extra_headers": {"Authorization": f"Bearer {KEY}"}}, "extra_headers.Authorization"),
        ({"extra_headers": {"X-Custom": f"Bearer {KEY}"}}, "judge.backend.extra_headers.X-Custom"),
        ({"base_url": f"https://user:{KEY}@judge.example/v1"}, "judge.backend.base_url"),
    ],
)
@pytest.mark.parametrize("source", ["env", "file"])
def test_a_secret_in_judge_options_is_refused_at_start(
    tmp_path: Path, options: dict[str, object], field: str, source: str
) -> None:
    options = {"model": "m", **options}
    if source == "env":
        env = {"RAGPULSE_JUDGE__BACKEND": json.dumps({"type": "openai", **options})}
        args: tuple[str, ...] = ()
    else:
        config = tmp_path / "config.yaml"
        config.write_text(json.dumps({"judge": {"backend": {"type": "openai", **options}}}))
        env, args = {}, ("--config", str(config))
    for command in (("config", "--print"), ("run",)):
        done = _ragpulse(*args, *command, env=env)
        assert done.returncode == 2, done.stdout + done.stderr
        assert field in done.stderr
        if source == "env":  # the variable it came from; from a file, the file
            assert "RAGPULSE_JUDGE__BACKEND" in done.stderr
        assert "headers_from_env" in done.stderr  # where the secret goes instead
        assert KEY not in done.stdout + done.stderr


def test_a_missing_secret_variable_is_a_start_error_naming_the_field() -> None:
    env = {
        "RAGPULSE_JUDGE__BACKEND__TYPE": "openai",
        "RAGPULSE_JUDGE__HEADERS_FROM_ENV": json.dumps({"api-key": "RP_TEST_NOT_SET"}),
    }
    done = _ragpulse("run", env=env)
    assert done.returncode == 2
    assert "judge.headers_from_env.api-key" in done.stderr and "RP_TEST_NOT_SET" in done.stderr
    assert "RAGPULSE_JUDGE__HEADERS_FROM_ENV" in done.stderr


def test_the_chart_renders_no_planted_secret(tmp_path: Path) -> None:
    values = {
        "secrets": {
            "existingSecret": "creds",
            "judgeApiKeyKey": "key",
            "judgeHeaders": [{"header": "X-Gateway-Token", "key": "gw"}],
            "judgeQuery": [{"param": "subscription-key", "key": "apim"}],
        },
        "config": {"judge": {"backend": {"type": "openai", "model": "m"}}},
    }
    with helm.Chart.load(CHART) as chart:
        text = json.dumps(render(chart, values))
        _assert_clean(text, "the rendered chart")
        values["config"]["judge"]["backend"]["extra_headers"] = {"api-key": KEY}  # type: ignore[index]
        with pytest.raises(helm.HelmError) as info:
            render(chart, values)
        assert KEY not in str(info.value)


@pytest.mark.broker
def test_a_judging_sidecar_never_prints_a_planted_secret(
    sidecar_factory,  # type: ignore[no-untyped-def]
    topics: Topics,
    tmp_path: Path,
    server: FaultServer,
) -> None:
    # the first answers echo every secret back (a proxy's error page, say), with the URL
    echo = (
        f"bad key {KEY} / {HEADER} for {server.base_url}/chat/completions?subscription-key={QUERY}"
    )
    server.push(status(401, body=echo), status(500, body=echo), status(400, body=echo))
    options = {"base_url": server.base_url, "model": "judge-model", "max_attempts": 2}
    sc = sidecar_factory(
        topics,
        **SECRET_ENV,
        RAGPULSE_LOG_LEVEL="DEBUG",
        RAGPULSE_JUDGE__BACKEND=json.dumps({"type": "openai", **options}),
        RAGPULSE_JUDGE__METRICS='["rag_triad"]',
        RAGPULSE_SAMPLING__RATE="1.0",
    ).start(tmp_path)
    events = list(generate(8, seed=11, malformed_rate=0.0))
    produce(sc.bootstrap, topics.input, [(g.key, g.raw) for g in events])
    sc.wait_consumed(len(events))
    deadline = time.monotonic() + 60
    while len(server.requests) < len(events) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert len(server.requests) >= len(events), sc.output()[-3000:]
    with urllib.request.urlopen(sc.url + "/metrics", timeout=10) as resp:
        metrics = resp.read().decode()
    assert sc.terminate() == 0

    # the secrets did go where they belong: to the judge, in the header and the query
    sent = server.requests[-1]
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    assert sent["headers"]["X-Gateway-Token"] == HEADER
    assert sent["query"]["subscription-key"] == QUERY
    # ... and nowhere else
    output = sc.output()
    assert " DEBUG " in output  # the sidecar did log at DEBUG
    _assert_clean(output, "the sidecar's output")
    _assert_clean(metrics, "/metrics")
    assert "HTTP Request:" not in output  # httpx's request lines are off (WARNING)
