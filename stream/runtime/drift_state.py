"""Drift state on Kafka: snapshots to a compacted topic, restored at start (`DriftState`).

Keys are `<group_id>|<stream id>`, values pickled streams (see monitors.drift.monitor);
several sidecar groups can share the topic. The latest record per key wins.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from exporters import Metrics
from stream.runtime.kafka_config import aiokafka_kwargs
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import KafkaSettings, Settings

__all__ = ["DriftState", "load_state", "state_key"]

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


class DriftState:
    """The pipeline's drift streams, persisted: restored at start, snapshotted every
    `drift.snapshot_every_s` and once more after the final drain (own producer)."""

    def __init__(self, settings: Settings, pipeline: Pipeline, metrics: Metrics) -> None:
        self.settings, self.pipeline, self.metrics = settings, pipeline, metrics
        self._producer: AIOKafkaProducer | None = None

    async def restore(self) -> None:
        drift = self.pipeline.drift
        if drift is None:
            return
        state = await load_state(self.settings.kafka)
        restored = drift.restore(state)
        for key in drift.active():
            self.metrics.drift_alarm.labels(key.metric, key.detector, key.service).set(1)
        log.info("drift state: restored %d streams, %d alarms up", restored, len(drift.active()))

    async def snapshot(self) -> None:
        drift = self.pipeline.drift
        if drift is None:
            return
        k = self.settings.kafka
        if self._producer is None:
            self._producer = AIOKafkaProducer(**aiokafka_kwargs(k))
            await self._producer.start()
        for sid, blob in drift.snapshot().items():
            await self._producer.send(k.state_topic, blob, key=state_key(k.group_id, sid))
        await self._producer.flush()

    async def loop(self) -> None:
        every = self.settings.drift.snapshot_every_s
        while True:
            await asyncio.sleep(every)
            try:
                await self.snapshot()
            except Exception as exc:  # retried at the next period; never stops the stream
                log.warning("drift snapshot failed: %s", type(exc).__name__)

    async def close(self) -> None:
        """The last snapshot (after the drain: it includes every committed event)."""
        try:
            await self.snapshot()
        finally:
            if self._producer is not None:
                await self._producer.stop()
