"""Security hygiene: no PII or raw text in metric labels or default logs, secrets never
logged, PII redacted before an external judge, Kafka TLS/SASL passed through."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from monitors.judges.openai import OpenAIJudge, is_loopback
from stream.runtime.kafka_config import aiokafka_kwargs, faust_credentials
from stream.runtime.settings import KafkaSettings
from tests.conftest import REPO, Topics, consume_all, produce, sample
from tests.stream.runtime.faults import engine_env

EMAIL, PHONE, CARD = "zoe.quill@privmail.example", "+44 20 7946 0958", "4242 4242 4242 4242"
SECRET = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
RAW = "the quarterly figures for Quillfeather Holdings"  # plain raw text, no PII
SENSITIVE = (EMAIL, PHONE, CARD, SECRET, "zoe.quill", "7946 0958", "4242", "Quillfeather")
JUDGE_KEY, SASL_PASSWORD = "sk-judge-0123456789abcdef", "sasl-pw-fedcba9876543210"
ADMIN_TOKEN = "admin-tok-5e4d3c2b1a09f8e7d6c5"


def _events(n: int) -> list[tuple[bytes | None, bytes]]:
    out: list[tuple[bytes | None, bytes]] = []
    for i in range(n):
        event = {
            "event_id": f"pii-{i}",
            "query": f"What is {RAW}? Call me on {PHONE}.",
            "response": f"Sure: write to {EMAIL}, pay with card {CARD}; token {SECRET}.",
            "retrieved_context": [{"id": "c1", "content": f"{RAW} are in the annual report"}],
            "history": [{"role": "user", "content": f"call me on {PHONE}"}],
            "case": {"subject": RAW, "metadata": {"owner": EMAIL}},
            "labels": {"note": SECRET},
            "customer_email": EMAIL,  # an unknown field
        }
        out.append((f"conv-{i}".encode(), json.dumps(event).encode()))
    # invalid ones carrying PII: the dead-letter reason must not echo their text
    out.append((None, json.dumps({"event_id": "bad", "query": 42, "response": EMAIL}).encode()))
    out.append((None, f'{{"event_id": "bad2", "query": "{CARD}", '.encode()))
    return out


def _leaks(text: str) -> list[str]:
    """The sensitive strings in `text`; a digit run counts only as a whole number, so a
    metric value or a byte count such as 104242 is not a card fragment."""
    return [s for s in SENSITIVE if re.search(rf"(?<!\d){re.escape(s)}(?!\d)", text)]


def _series_text(exposition: str) -> str:
    """The exposition without its sample values: names, labels, HELP and TYPE lines."""
    lines = exposition.splitlines()
    return "\n".join(ln if ln.startswith("#") else ln.rsplit(" ", 1)[0] for ln in lines)


@pytest.mark.broker
def test_sidecar_metrics_and_logs_hold_no_pii_or_secrets(
    sidecar_factory, topics: Topics, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    messages = _events(40)
    env = {
        "RAGPULSE_JUDGE__API_KEY": JUDGE_KEY,
        "RAGPULSE_KAFKA__SASL_PASSWORD": SASL_PASSWORD,
        "RAGPULSE_KAFKA__SASL_USERNAME": "ragpulse",
        "RAGPULSE_SERVER__ADMIN__ENABLED": "true",
        "RAGPULSE_SERVER__ADMIN__TOKEN": ADMIN_TOKEN,
        **engine_env(),
    }
    sc = sidecar_factory(topics, **env).start(tmp_path)
    produce(sc.bootstrap, topics.input, messages)
    m = sc.wait_consumed(len(messages))
    assert sample(m, "ragpulse_events_total", outcome="scored") == 40
    assert sample(m, "ragpulse_detector_hits_total", detector="pii", category="payment_card") == 40
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(sc.url + "/metrics", timeout=5) as resp:
        exposition = resp.read().decode()
    assert _leaks(_series_text(exposition)) == []
    labels = {v for (_, lbls) in m for _, v in lbls}
    assert all(len(v) <= 64 for v in labels), sorted(labels, key=len)[-3:]
    consume_all(sc.bootstrap, topics.dlq, 2)  # both dead letters went out
    for token, code in ((ADMIN_TOKEN[:-1], 401), (ADMIN_TOKEN, 200)):  # refused, then accepted
        req = urllib.request.Request(
            sc.url + "/drift/rebaseline",
            method="POST",
            headers={"Authorization": f"Bearer {token}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=15) as resp:
                assert resp.status == code
        except urllib.error.HTTPError as exc:
            assert exc.code == code
    assert sc.terminate() == 0
    log = sc.output()
    assert "serving /metrics" in log  # the log was captured
    assert "refused POST /drift/rebaseline" in log and "admin: POST /drift/rebaseline" in log
    assert _leaks(log) == []
    assert JUDGE_KEY not in log and SASL_PASSWORD not in log
    assert ADMIN_TOKEN[:-1] not in log  # neither the token nor a wrong guess


def test_score_cli_stderr_holds_no_pii(tmp_path: Path) -> None:
    src = tmp_path / "events.jsonl"
    src.write_bytes(b"\n".join(raw for _, raw in _events(20)) + b"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["RAGPULSE_JUDGE__API_KEY"] = JUDGE_KEY
    out = subprocess.run(
        [sys.executable, "-m", "stream.cli", "score", "-i", str(src), "-o", str(tmp_path / "o")],
        env=env, capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "20" in out.stderr  # the summary was printed
    assert _leaks(out.stderr) == [] and JUDGE_KEY not in out.stderr
    assert len((tmp_path / "o").read_text().splitlines()) == 22  # 20 cards + 2 error lines


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_config_print_masks_secrets(fmt: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env.update({"RAGPULSE_JUDGE__API_KEY": JUDGE_KEY, "RAGPULSE_KAFKA__SASL_PASSWORD":
                SASL_PASSWORD, "RAGPULSE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                # a key is for an LLM judge: `config --print` builds the judge as `run` does
                "RAGPULSE_JUDGE__BACKEND": (
                    '{"type": "openai", "model": "m", "base_url": "https://judge.example/v1"}'
                ),
                })  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "stream.cli", "config", "--print", "--format", fmt],
        env=env, capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert JUDGE_KEY not in out.stdout + out.stderr
    assert SASL_PASSWORD not in out.stdout + out.stderr
    assert out.stdout.count("**********") == 2
    assert "SASL_PLAINTEXT" in out.stdout  # the rest is shown


# ------------------------------------------------------------------ judge redaction
class _Verdict(BaseModel):
    score: float
    justification: str


class _Capture(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        content = json.dumps({"score": 0.5, "justification": "ok"})
        reply = json.dumps({
            "id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: object) -> None:
        return


def _non_loopback_ip() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.255.255.255", 1))  # no packet is sent: picks the outgoing interface
        return str(s.getsockname()[0])


@pytest.fixture
def judge_server() -> Iterator[int]:
    _Capture.bodies = []
    server = ThreadingHTTPServer(("0.0.0.0", 0), _Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _ask(judge: OpenAIJudge, text: str) -> None:
    async def go() -> None:
        try:
            await judge.complete("You grade answers.", text, _Verdict, "v1")
        finally:
            await judge.aclose()

    asyncio.run(go())


def test_pii_is_redacted_by_default_before_a_non_loopback_judge(judge_server: int) -> None:
    text = f"Mail {EMAIL}, call {PHONE}, card {CARD}. {RAW}."
    ip = _non_loopback_ip()
    assert not is_loopback(f"http://{ip}:1/v1")
    remote = OpenAIJudge(model="m", base_url=f"http://{ip}:{judge_server}/v1")
    assert remote.redact_pii  # the default for a non-loopback URL
    _ask(remote, text)
    local = OpenAIJudge(model="m", base_url=f"http://127.0.0.1:{judge_server}/v1")
    assert not local.redact_pii  # a judge on the same host sees the text as is
    _ask(local, text)
    sent_remote = _Capture.bodies[0]["messages"][1]["content"]
    sent_local = _Capture.bodies[1]["messages"][1]["content"]
    assert [s for s in (EMAIL, PHONE, CARD) if s in sent_remote] == []
    assert "[email redacted]" in sent_remote and "[payment_card redacted]" in sent_remote
    assert RAW in sent_remote  # only PII is masked, the question survives
    assert EMAIL in sent_local and CARD in sent_local


# ------------------------------------------------------------------ Kafka TLS / SASL
def test_kafka_sasl_ssl_settings_reach_aiokafka_and_faust(tmp_path: Path) -> None:
    key, cert = tmp_path / "client.key", tmp_path / "client.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=ragpulse-test", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    k = KafkaSettings(
        bootstrap_servers="k0:9093,k1:9093", security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512", sasl_username="ragpulse", sasl_password=SASL_PASSWORD,
        ssl_cafile=cert, ssl_certfile=cert, ssl_keyfile=key,
    )  # fmt: skip
    kw = aiokafka_kwargs(k)
    assert kw["bootstrap_servers"] == ["k0:9093", "k1:9093"]
    assert kw["security_protocol"] == "SASL_SSL" and kw["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (kw["sasl_plain_username"], kw["sasl_plain_password"]) == ("ragpulse", SASL_PASSWORD)
    ctx = kw["ssl_context"]
    assert isinstance(ctx, ssl.SSLContext) and ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname and len(ctx.get_ca_certs()) == 1  # the configured CA only
    creds = faust_credentials(k)
    assert creds is not None and creds.protocol.value == "SASL_SSL"
    assert creds.mechanism.value == "SCRAM-SHA-512" and creds.username == "ragpulse"
    assert creds.password == SASL_PASSWORD and creds.ssl_context is not None
    assert SASL_PASSWORD not in repr(k) and SASL_PASSWORD not in json.dumps(k.model_dump(
        mode="json"))  # fmt: skip

    tls = KafkaSettings(security_protocol="SSL", ssl_cafile=cert)
    assert "sasl_mechanism" not in aiokafka_kwargs(tls)
    tls_creds = faust_credentials(tls)
    assert tls_creds is not None and tls_creds.protocol.value == "SSL"
    plain = KafkaSettings()
    assert faust_credentials(plain) is None and "ssl_context" not in aiokafka_kwargs(plain)


def test_tls_and_sasl_are_documented() -> None:
    doc = (REPO / "docs" / "reliability.md").read_text()
    for name in ("security_protocol", "sasl_mechanism", "RAGPULSE_KAFKA__SASL_PASSWORD",
                 "ssl_cafile", "ssl_certfile", "ssl_keyfile"):  # fmt: skip
        assert name in doc, name
