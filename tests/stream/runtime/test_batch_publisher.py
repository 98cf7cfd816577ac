"""BatchPublisher on the real broker: every record delivered once, on the partition the
default (Java-compatible murmur2) partitioner picks, full and oversized batches too."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner

from stream.demo import EmbeddedBroker
from stream.runtime.batch_publisher import BatchPublisher
from tests.conftest import consume_all
from tests.support.kafka import create_topic

pytestmark = pytest.mark.broker


def _publish(bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes]]) -> None:
    async def go() -> None:
        await create_topic(bootstrap, topic, 4)
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            pub = BatchPublisher(producer)
            half = len(records) // 2
            for key, value in records[:half]:
                await pub.add(topic, key, value, [("h", b"1")])
            await pub.flush()  # two fetched batches' worth: flush, then reuse
            for key, value in records[half:]:
                await pub.add(topic, key, value, [])
            await pub.flush()
        finally:
            await producer.stop()

    asyncio.run(go())


def test_keyed_records_land_where_the_default_partitioner_puts_them(
    broker: EmbeddedBroker,
) -> None:
    topic = f"bp-{uuid.uuid4().hex[:8]}"
    # ~1 KB values: a 16 KB batch fills after ~15 records, so builders roll over often
    records = [(f"conv-{i % 97}".encode(), f"{i:05d}".encode() + b"x" * 1000) for i in range(600)]
    _publish(broker.bootstrap_servers, topic, records)
    got = consume_all(broker.bootstrap_servers, topic, len(records))
    assert sorted(r.value for r in got) == sorted(v for _, v in records)  # each once
    parts = [0, 1, 2, 3]
    for rec in got:
        assert rec.partition == DefaultPartitioner()(rec.key, parts, parts)
    first = [r for r in got if int(r.value[:5]) < 300]
    assert first and all(list(r.headers) == [("h", b"1")] for r in first), first[0].headers


def test_unkeyed_spread_and_an_oversized_record_is_still_delivered(
    broker: EmbeddedBroker,
) -> None:
    topic = f"bp-{uuid.uuid4().hex[:8]}"
    big = b"B" * 40_000  # larger than a whole 16 KB batch: goes through send()
    records: list[tuple[bytes | None, bytes]] = [(None, f"u{i}".encode()) for i in range(40)]
    records.insert(20, (b"k", big))
    _publish(broker.bootstrap_servers, topic, records)
    got = consume_all(broker.bootstrap_servers, topic, len(records))
    assert sorted(r.value for r in got) == sorted(v for _, v in records)
    assert {r.partition for r in got if r.key is None} == {0, 1, 2, 3}
