"""The drift changelog on Kafka: read one partition's latest states, write snapshots.

Keys are ``<group_id>|<series id>`` (several groups may share the topic; each reads its
own), values JSON :class:`~monitors.fleet.SeriesRecord` written to the partition with
the number of the series' observation partition. Reading returns raw bytes per series;
the owner validates each (`monitors.fleet.decode_state`) and counts what it refuses.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.runtime.kafka_config import aiokafka_kwargs
from stream.runtime.settings import KafkaSettings

__all__ = ["read_partitions", "state_key", "write_state"]

log = logging.getLogger(__name__)


def state_key(group_id: str, series: str) -> bytes:
    return f"{group_id}|{series}".encode()


async def read_partitions(
    k: KafkaSettings, partitions: list[int], max_wait_s: float = 30.0
) -> dict[int, dict[str, bytes | None]]:
    """{partition: {series id: latest value (None: a tombstone)}} of our group."""
    prefix = f"{k.group_id}|".encode()
    out: dict[int, dict[str, bytes | None]] = {p: {} for p in partitions}
    if not partitions:
        return out
    consumer = AIOKafkaConsumer(
        **aiokafka_kwargs(k), enable_auto_commit=False, client_id=f"{k.client_id}-restore",
        max_partition_fetch_bytes=max(1_048_576, k.max_record_bytes + 1024),
    )  # fmt: skip
    await consumer.start()
    try:
        tps = [TopicPartition(k.state_topic, p) for p in partitions]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)

        async def drain() -> None:
            remaining = {tp for tp in tps if end[tp] > 0}
            while remaining:
                batch = await consumer.getmany(*remaining, timeout_ms=500)
                for tp, records in batch.items():
                    for rec in records:
                        key = rec.key or b""
                        if key.startswith(prefix) and len(key) <= 512:
                            sid = key[len(prefix) :].decode("utf-8", "replace")
                            out[tp.partition][sid] = rec.value
                for tp in list(remaining):
                    if await consumer.position(tp) >= end[tp]:
                        remaining.discard(tp)

        await asyncio.wait_for(drain(), max_wait_s)
    finally:
        await consumer.stop()
    return out


async def write_state(
    producer: AIOKafkaProducer, k: KafkaSettings, partition: int, series: str, value: bytes
) -> None:
    """One snapshot, delivered (awaited) before the caller goes on."""
    await (await producer.send(k.state_topic, value, key=state_key(k.group_id, series),
                               partition=partition))  # fmt: skip
