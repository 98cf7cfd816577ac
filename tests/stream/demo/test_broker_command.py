"""The README's "Try it with your own producer", as a user runs it: `ragpulse broker`,
`ragpulse run` pointed at it, the README's example event produced by confluent-kafka (a
client ragpulse does not use), and `/metrics`; both processes stop on SIGTERM with exit 0."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import Producer

from stream.demo import free_port

pytestmark = pytest.mark.broker

REPO = Path(__file__).resolve().parents[3]


def readme_event() -> dict[str, object]:
    """The first JSON block of the README's "The event" section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The event") :]
    start = section.index("```json") + len("```json")
    block = section[start : section.index("\n```", start)]
    event: dict[str, object] = json.loads(block)
    return event


def _metric(port: int, name: str, **labels: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + ("{" if labels else " ")) and want in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def _wait(what: str, probe: object, timeout: float, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{what}: the process exited"
        try:
            if probe():  # type: ignore[operator]
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_broker_run_own_producer_and_metrics(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["PYTHONUNBUFFERED"] = "1"
    cli = [sys.executable, "-m", "stream.cli"]
    broker_log = (tmp_path / "broker.log").open("w")  # log lines; stdout has the address
    broker = subprocess.Popen(
        [*cli, "broker", "--port", str(free_port())],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=broker_log, text=True,
    )  # fmt: skip
    run: subprocess.Popen[str] | None = None
    try:
        assert broker.stdout is not None
        first = broker.stdout.readline()
        match = re.search(r"broker on (127\.0\.0\.1:\d+) \(memory only", first)
        assert match, first + (tmp_path / "broker.log").read_text()
        bootstrap = match.group(1)
        assert f"RAGPULSE_KAFKA__BOOTSTRAP_SERVERS={bootstrap}" in broker.stdout.readline()
        port = free_port()
        run_env = {
            **env,
            "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
            "RAGPULSE_SERVER__HOST": "127.0.0.1",
            "RAGPULSE_SERVER__PORT": str(port),
            "RAGPULSE_JUDGE__BACKEND__TYPE": "none",
        }
        log = (tmp_path / "run.log").open("w")
        run = subprocess.Popen(
            [*cli, "run"], cwd=REPO, env=run_env, stdout=log, stderr=log, text=True
        )

        def ready() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                return bool(r.status == 200)

        _wait("ragpulse run ready", ready, 90, run)
        event = readme_event()
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce("rag.interactions", json.dumps(event).encode(), key=b"conv-311")
        assert producer.flush(30) == 0
        _wait(
            "the README's event scored",
            lambda: _metric(port, "ragpulse_events_total", outcome="scored") >= 1,
            60,
            run,
        )
        assert _metric(port, "ragpulse_scored_events_total", service="it-support") == 1
        run.send_signal(signal.SIGTERM)
        assert run.wait(60) == 0, (tmp_path / "run.log").read_text()
    finally:
        if run is not None and run.poll() is None:
            run.kill()
        broker.send_signal(signal.SIGTERM)
        code = broker.wait(30)
    assert code == 0
    assert broker.stdout is not None and "exited" not in broker.stdout.read()


def test_the_broker_leaves_no_log_file_behind() -> None:
    from stream.demo import EmbeddedBroker

    broker = EmbeddedBroker().start()
    path = broker._log_path
    assert path is not None and path.exists()
    broker.stop()
    assert not path.exists()
    broker.stop()  # idempotent
