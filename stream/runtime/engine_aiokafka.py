"""`engine: aiokafka` — the batch engine: `getmany` batches, manual commit after export.

Each fetched batch goes message by message through the same Pipeline and router
(:class:`~stream.runtime.router.OutputRouter`) as the faust engine; every record it
produces (scorecards, dead letters, alarms) is appended to a Kafka record batch per output partition
(:class:`~stream.runtime.batch_publisher.BatchPublisher`), the batches are published, the engine
waits until all of them are delivered and only then commits the batch's offsets. A
crash before the commit means the batch is processed again (at-least-once; the dedupe
window catches the repeats while the process lives). A rebalance waits for the batch in flight and
commits it before giving partitions up. SIGTERM: stop fetching, finish the batch,
flush, commit, leave the group.

Every record is sized first (:class:`~stream.runtime.record_size.OutputGuard`: within
`kafka.max_record_bytes`, shed or dead-lettered); one the broker still refuses goes to the
dead-letter topic (`output_rejected`) or is counted, and the batch is committed: a record
never stops the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition

from stream.runtime.batch_publisher import BatchPublisher
from stream.runtime.engine import Headers, SidecarBase
from stream.runtime.fetch_guard import FetchGuard, SkippedBatch
from stream.runtime.kafka_config import aiokafka_kwargs
from stream.runtime.record_size import REFUSED, OutputGuard, Record

__all__ = ["AiokafkaSidecar"]

log = logging.getLogger(__name__)

MAX_RECORDS = 1000  # per getmany batch


class _Listener(ConsumerRebalanceListener):
    """aiokafka's rebalance hooks, handed to the engine."""

    def __init__(self, engine: AiokafkaSidecar) -> None:
        self.engine = engine

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        await self.engine._on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        await self.engine._on_assigned(assigned)


class AiokafkaSidecar(SidecarBase):
    engine = "aiokafka"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self._task: asyncio.Task[None] | None = None
        self._batches: BatchPublisher | None = None
        self._guard: FetchGuard | None = None
        self._batch_lock = asyncio.Lock()
        self._revoking = True  # not ready before the first assignment
        self._stopping = False
        self.outputs = OutputGuard(self.settings.kafka, self.prom)

    async def _on_revoked(self, revoked: list[TopicPartition]) -> None:
        self._revoking = True
        async with self._batch_lock:  # the batch in flight is committed first
            if self._guard is not None:
                self._guard.forget(revoked)

    async def _on_assigned(self, assigned: list[TopicPartition]) -> None:
        self._revoking = False
        log.info("assigned partitions %s", sorted(tp.partition for tp in assigned))

    async def _engine_start(self) -> None:
        k = self.settings.kafka
        conn = aiokafka_kwargs(k)
        producer = AIOKafkaProducer(**conn, client_id=k.client_id, acks="all", linger_ms=5,
                                    max_request_size=k.max_record_bytes)  # fmt: skip
        consumer = AIOKafkaConsumer(
            **conn,
            client_id=k.client_id,
            group_id=k.group_id,
            enable_auto_commit=False,
            auto_offset_reset=k.auto_offset_reset,
            session_timeout_ms=int(k.session_timeout_s * 1000),
            heartbeat_interval_ms=int(k.heartbeat_interval_s * 1000),
            rebalance_timeout_ms=int(k.rebalance_timeout_s * 1000),
            max_poll_records=MAX_RECORDS,
            fetch_max_wait_ms=k.fetch_max_wait_ms,
            isolation_level=k.isolation_level,
        )
        try:
            await producer.start()
            await consumer.start()
            consumer.subscribe([k.input_topic], listener=_Listener(self))
        except BaseException:
            await consumer.stop()
            await producer.stop()
            raise
        self._producer, self._consumer = producer, consumer
        self._batches = BatchPublisher(producer, self._rejected)
        self._guard = FetchGuard(consumer)
        self._stopping = False
        self._task = asyncio.create_task(self._consume(), name="ragpulse.detect")

    async def _consume(self) -> None:
        assert self._consumer is not None and self._guard is not None
        consumer, guard = self._consumer, self._guard
        while not self._stopping:
            batch = await guard.getmany(timeout_ms=200, max_records=MAX_RECORDS)
            if not batch and not guard.skipped:
                continue
            async with self._batch_lock:
                await self._process(consumer, batch, guard.take_skipped())

    async def _process(
        self,
        consumer: AIOKafkaConsumer,
        batch: dict[TopicPartition, list[Any]],
        skipped: Sequence[SkippedBatch] = (),
    ) -> None:
        process, route = self.pipeline.process, self.router.route
        commit: dict[TopicPartition, int] = {}
        for tp, records in batch.items():
            topic, partition = tp.topic, tp.partition
            for rec in records:
                result = process(rec.value)
                await route(result, rec.key, rec.value, topic, partition, rec.offset, rec.headers)
            commit[tp] = records[-1].offset + 1
        for skip in skipped:  # after the records before it; committed past it
            await self.router.skip_batch(skip)
            tp = TopicPartition(skip.topic, skip.partition)
            commit[tp] = max(commit.get(tp, 0), skip.next_offset)
        await self._delivered()
        await consumer.commit(commit)

    async def _delivered(self) -> None:
        assert self._batches is not None
        await self._batches.flush()

    async def _send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers | None = None,
        force: bool = False,
    ) -> Any:
        assert self._producer is not None and self._batches is not None
        record = self.outputs.fit(topic, key, value, headers)
        if record is None:  # a dead letter over the cap: counted
            return None
        if force:  # outside any fetched batch (judge updates, operator re-baseline)
            try:
                return await self._deliver(record)
            except REFUSED as exc:
                await self._rejected(record, exc)
                return None
        await self._batches.add(*record)
        return None

    async def _deliver(self, record: Record) -> Any:
        assert self._producer is not None
        topic, key, value, headers = record
        return await (await self._producer.send(topic, value, key=key, headers=headers))

    async def _rejected(self, record: Record, exc: Exception) -> None:
        """A record the broker refused alone: its dead letter, sent at once (a dead letter
        refused too is counted and dropped)."""
        letter = self.outputs.refused(*record, "rejected", f"{type(exc).__name__}: {exc}")
        if letter is None:
            return
        try:
            await self._deliver(letter)
        except REFUSED as again:
            self.outputs.refused(*letter, "rejected", f"{type(again).__name__}: {again}")

    async def _engine_stop(self) -> None:
        self._stopping = True
        task, self._task = self._task, None
        if task is not None:
            # the batch in flight is delivered and committed; a loop that failed (reported
            # by _engine_failure) committed nothing past its last exported batch
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task
        if self._producer is not None:
            await self._producer.flush()
        if self._consumer is not None:
            await self._consumer.stop()  # leaves the group
        if self._producer is not None:
            await self._producer.stop()

    def _engine_failure(self) -> str | None:
        task = self._task
        if task is None or not task.done():
            return None
        exc = task.exception() if not task.cancelled() else None
        return f"{type(exc).__name__}: {exc}" if exc is not None else "consumer loop ended"

    def _rebalancing(self) -> bool:
        return self._revoking

    async def _highwaters(self) -> dict[int, int]:
        assert self._consumer is not None
        assigned = sorted(self._consumer.assignment(), key=lambda tp: tp.partition)
        if not assigned:
            # no partitions (yet): still prove the broker answers
            await self._consumer.topics()
            return {}
        ends = await self._consumer.end_offsets(assigned)
        return {tp.partition: high for tp, high in ends.items()}

    async def _committed(self, partitions: list[int]) -> dict[int, int | None]:
        assert self._consumer is not None
        topic = self.settings.kafka.input_topic
        return {p: await self._consumer.committed(TopicPartition(topic, p)) for p in partitions}
