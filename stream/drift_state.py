"""Drift state on Kafka: snapshots to a compacted topic, restored at start.

Keys are `<group_id>|<stream id>`, values pickled streams (see monitors.drift_monitor);
several sidecar groups can share the topic. The latest record per key wins.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.kafka_config import aiokafka_kwargs
from stream.settings import KafkaSettings

__all__ = ["load_state", "state_key"]

log = logging.getLogger(__name__)


def state_key(group_id: str, stream_id: str) -> bytes:
    return f"{group_id}|{stream_id}".encode()


async def load_state(k: KafkaSettings, max_wait_s: float = 30.0) -> dict[str, bytes]:
    """Read the state topic to its end; return {stream id: latest snapshot} for our group."""
    prefix = f"{k.group_id}|".encode()
    consumer = AIOKafkaConsumer(
        **aiokafka_kwargs(k), enable_auto_commit=False, client_id=f"{k.client_id}-state"
    )
    await consumer.start()
    state: dict[str, bytes] = {}
    try:
        parts = consumer.partitions_for_topic(k.state_topic) or set()
        if not parts:
            return state
        tps = [TopicPartition(k.state_topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        remaining = {tp for tp in tps if end[tp] > 0}

        async def drain() -> None:
            while remaining:
                batch = await consumer.getmany(*remaining, timeout_ms=500)
                for records in batch.values():
                    for rec in records:
                        if rec.key and rec.key.startswith(prefix):
                            sid = rec.key[len(prefix) :].decode()
                            if rec.value is None:
                                state.pop(sid, None)
                            else:
                                state[sid] = rec.value
                for tp in list(remaining):
                    if await consumer.position(tp) >= end[tp]:
                        remaining.discard(tp)

        await asyncio.wait_for(drain(), max_wait_s)
    finally:
        await consumer.stop()
    return state
