"""The aiokafka batch engine in-process on the real broker: commit only after export."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from exporters import PromFamilies
from stream.demo import EmbeddedBroker, free_port, generate
from stream.runtime.engine_aiokafka import AiokafkaSidecar
from stream.runtime.engine_faust import FaustSidecar
from stream.runtime.factory import build_sidecar
from stream.runtime.settings import Settings, load_settings
from tests.conftest import Topics, consume_all, produce

pytestmark = pytest.mark.broker


def _settings(broker: EmbeddedBroker, topics: Topics, **extra: Any) -> Settings:
    return load_settings(
        engine="aiokafka",
        kafka={
            "bootstrap_servers": broker.bootstrap_servers,
            "input_topic": topics.input,
            "dlq_topic": topics.dlq,
            "scores_topic": topics.scores,
            "alarms_topic": topics.alarms,
            "state_topic": topics.state,
            "observations_topic": topics.observations,
            "group_id": topics.group,
            "session_timeout_s": 6,
            "rebalance_timeout_s": 3,
            "heartbeat_interval_s": 1,
        },
        server={"host": "127.0.0.1", "port": free_port()},
        judge={"backend": "none"},
        **extra,
    )


def _messages(n: int) -> list[tuple[bytes | None, bytes]]:
    return [(g.key, g.raw) for g in generate(n, seed=3, malformed_rate=0.0)]


async def _committed(settings: Settings) -> int:
    k = settings.kafka
    consumer = AIOKafkaConsumer(bootstrap_servers=k.bootstrap_servers, group_id=k.group_id)
    await consumer.start()
    try:
        tps = [TopicPartition(k.input_topic, p) for p in range(k.topic_partitions)]
        return sum([await consumer.committed(tp) or 0 for tp in tps])
    finally:
        await consumer.stop()


async def _run_until(sidecar: AiokafkaSidecar, consumed: int, wait_s: float = 60) -> int:
    stop = asyncio.Event()
    task = asyncio.create_task(sidecar.run(stop, install_signals=False))
    events = sidecar.prom.events.labels("consumed")
    for _ in range(int(wait_s * 10)):
        if task.done() or events._value.get() >= consumed:
            break
        await asyncio.sleep(0.1)
    stop.set()
    return await asyncio.wait_for(task, 60)


def test_engine_setting_picks_the_batch_engine(broker: EmbeddedBroker) -> None:
    s = _settings(broker, Topics.unique())
    assert isinstance(build_sidecar(s, PromFamilies()), AiokafkaSidecar)
    faust = s.model_copy(update={"engine": "faust"})
    assert type(build_sidecar(faust, PromFamilies())) is FaustSidecar


def test_batch_is_committed_after_its_records_are_published(
    broker: EmbeddedBroker, topics: Topics
) -> None:
    s = _settings(broker, topics)
    msgs = [*_messages(120), (None, b'{"event_id": "bad"')]
    produce(broker.bootstrap_servers, topics.input, msgs)
    sidecar = AiokafkaSidecar.from_settings(s, PromFamilies())
    assert sidecar.readiness() == (False, "starting")
    assert asyncio.run(_run_until(sidecar, len(msgs))) == 0  # graceful stop: exit 0
    assert asyncio.run(_committed(s)) == len(msgs)  # every offset committed at the stop
    cards = consume_all(broker.bootstrap_servers, topics.scores, 120)
    assert sorted(json.loads(r.value)["event_id"] for r in cards) == sorted(
        json.loads(v)["event_id"] for _, v in msgs[:-1]
    )
    dlq = consume_all(broker.bootstrap_servers, topics.dlq, 1)
    assert [dict(r.headers)["ragpulse.error.reason"] for r in dlq] == [b"invalid_json"]


def test_a_failed_publish_commits_nothing_and_a_restart_redoes_the_batch(
    broker: EmbeddedBroker, topics: Topics
) -> None:
    s = _settings(broker, topics)
    msgs = _messages(40)
    produce(broker.bootstrap_servers, topics.input, msgs)

    broken = AiokafkaSidecar.from_settings(s, PromFamilies())

    async def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("scores topic unavailable")

    broken._send = fail  # type: ignore[method-assign]
    assert asyncio.run(_run_until(broken, len(msgs), wait_s=20)) == 1  # engine failure
    assert asyncio.run(_committed(s)) == 0  # nothing exported, nothing committed

    again = AiokafkaSidecar.from_settings(s, PromFamilies())
    assert asyncio.run(_run_until(again, len(msgs))) == 0
    assert asyncio.run(_committed(s)) == len(msgs)
    cards = consume_all(broker.bootstrap_servers, topics.scores, len(msgs))
    assert len({json.loads(r.value)["event_id"] for r in cards}) == len(msgs)


def test_the_consumer_fetches_with_the_configured_max_wait(
    broker: EmbeddedBroker, topics: Topics
) -> None:
    """`kafka.fetch_max_wait_ms` reaches aiokafka's fetcher (a broker that needs longer
    than this to assemble a fetch may answer it empty: docs/reliability.md)."""
    s = _settings(broker, topics)
    s = s.model_copy(update={"kafka": s.kafka.model_copy(update={"fetch_max_wait_ms": 350})})
    produce(broker.bootstrap_servers, topics.input, _messages(5))
    sidecar = AiokafkaSidecar.from_settings(s, PromFamilies())
    seen: list[int] = []

    async def run() -> int:
        stop = asyncio.Event()
        task = asyncio.create_task(sidecar.run(stop, install_signals=False))
        for _ in range(600):
            if sidecar._consumer is not None:
                seen.append(sidecar._consumer._fetcher._fetch_max_wait_ms)  # aiokafka's own
                break
            await asyncio.sleep(0.1)
        stop.set()
        return await asyncio.wait_for(task, 60)

    assert asyncio.run(run()) == 0
    assert seen == [350]
