"""The Kafka sidecar: the stream engine chosen by `engine` around the shared Pipeline.

`engine: faust` (this module): a faust-streaming agent (on aiokafka). At-least-once:
faust acks an event when the agent moves past it; the scorecard and dead-letter records
sent from the agent are *attached* to that offset and published before the offset is
committed (faust attachments), so a crash before a commit means the event is processed
again, never lost. A graceful stop (SIGTERM) stops fetching, drains, flushes the
producer, commits and returns 0. `engine: aiokafka` is the batch engine of
`stream.runtime.engine_aiokafka`; everything but moving bytes is shared (`stream.runtime.engine`).

Every record is sized first (:class:`~stream.runtime.record_size.OutputGuard`), and the
producer's `max_request_size` is `kafka.max_record_bytes`. faust logs a record the broker
refuses and commits past it; this engine then sends its dead letter (`output_rejected`),
outside the offset it was attached to (a crash in between loses that dead letter).
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from stream.runtime import kafka_private
from stream.runtime.engine import Headers, SidecarBase
from stream.runtime.fetch_guard import FetchGuard, SkippedBatch, undecodable
from stream.runtime.kafka_config import aiokafka_kwargs, faust_credentials
from stream.runtime.record_size import REFUSED, OutputGuard, Record

if TYPE_CHECKING:  # faust (+14 MiB RSS) loads only for engine: faust
    import faust

__all__ = ["FaustSidecar"]

log = logging.getLogger(__name__)


class FaustSidecar(SidecarBase):
    """The faust engine: one agent, per-event processing, attachments before commit."""

    engine = "faust"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outputs = OutputGuard(self.settings.kafka, self.prom)
        self.app = self._build_app()
        self._admin: Any = None  # AIOKafkaAdminClient while running (lag probes)

    def _build_app(self) -> faust.App:
        import faust

        k = self.settings.kafka
        app = faust.App(
            k.group_id,
            broker=[f"kafka://{s}" for s in k.bootstrap_servers.split(",")],
            broker_credentials=faust_credentials(k),
            broker_client_id=k.client_id,
            broker_commit_interval=k.commit_interval_s,
            broker_session_timeout=k.session_timeout_s,
            broker_rebalance_timeout=k.rebalance_timeout_s,
            broker_heartbeat_interval=k.heartbeat_interval_s,
            consumer_auto_offset_reset=k.auto_offset_reset,
            topic_partitions=k.topic_partitions,
            topic_allow_declare=k.create_topics,
            value_serializer="raw",
            key_serializer="raw",
            producer_acks=-1,
            producer_max_request_size=k.max_record_bytes,
            web_enabled=False,
            store="memory://",
            datadir=str(self.settings.data_dir),
        )
        raw: dict[str, Any] = {
            "key_type": bytes,
            "value_type": bytes,
            "key_serializer": "raw",
            "value_serializer": "raw",
        }
        source = app.topic(k.input_topic, **raw)
        self._input = k.input_topic
        self._topics = {
            name: app.topic(name, **raw) for name in (k.scores_topic, k.dlq_topic, k.alarms_topic)
        }

        async def detect(stream: faust.StreamT) -> None:
            route = self.router.route
            async for event in stream.events():
                msg = event.message
                result = self.pipeline.process(event.value)
                await route(result, event.key, event.value, msg.topic, msg.partition,
                                 msg.offset, msg.headers or ())  # fmt: skip

        app.agent(source, name="ragpulse.detect")(detect)
        return app

    async def _send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers | None = None,
        force: bool = False,
    ) -> Any:
        record = self.outputs.fit(topic, key, value, headers)
        if record is None:  # a dead letter over the cap: counted
            return None
        topic, key, value, sent = record
        # inside the agent, faust attaches the record to the current offset
        fut = await self._topics[topic].send(key=key, value=value, headers=cast(Any, sent),
                                             force=force)  # fmt: skip
        if isinstance(fut, asyncio.Future):
            fut.add_done_callback(partial(self._published, record))
        return fut

    def _published(self, record: Record, fut: asyncio.Future[Any]) -> None:
        exc = None if fut.cancelled() else fut.exception()
        if isinstance(exc, REFUSED):
            self.judge_bridge.track(self._rejected(record, exc))

    async def _rejected(self, record: Record, exc: BaseException) -> None:
        """A record the broker refused: its dead letter (refused too: counted, dropped)."""
        letter = self.outputs.refused(*record, "rejected", f"{type(exc).__name__}: {exc}")
        if letter is None:
            return
        topic, key, value, headers = letter
        channel = self._topics[topic]
        try:
            await (await channel.send(key=key, value=value, headers=cast(Any, headers), force=True))
        except REFUSED as again:
            self.outputs.refused(*letter, "rejected", f"{type(again).__name__}: {again}")

    def _guard_fetches(self) -> None:
        """faust's consumer thread fetches through FetchGuard: a batch that does not decode
        is skipped, dead-lettered and counted, as on the aiokafka engine, and its offsets
        become a faust gap, committed with the next record acked after them."""
        thread = kafka_private.consumer_thread(self.app.consumer)
        if thread is None or not kafka_private.guard_fetch(thread, self._guarded):
            return
        level = self.settings.kafka.isolation_level  # faust reads committed only in EOS mode
        kafka_private.on_worker_consumer(
            thread, partial(kafka_private.set_isolation_level, level=level)
        )

    def _guarded(self, fetch: kafka_private.Fetch) -> kafka_private.Fetch:
        """faust's fetch, stepping past batches that do not decode (`FetchGuard`)."""
        guards: dict[int, FetchGuard] = {}

        async def guarded(
            consumer: Any,
            active: Any,
            timeout: float | None = None,  # noqa: ASYNC109 (faust's own signature)
            max_records: int | None = None,
        ) -> Any:
            guard = guards.get(id(consumer))
            if guard is None:
                guard = guards[id(consumer)] = FetchGuard(consumer)
            try:
                batch = await fetch(consumer, active, timeout=timeout, max_records=max_records)
            except Exception as exc:
                if not undecodable(exc):
                    raise
                batch = await guard.careful(max_records or 1000, exc, active)
                for skip in guard.take_skipped():  # on faust's thread: hand over to our loop
                    if self._loop is not None:
                        self._loop.call_soon_threadsafe(self._skipped, skip)
            guard.note(batch)
            return batch

        return guarded

    def _skipped(self, skip: SkippedBatch) -> None:
        async def record() -> None:
            await self.router.skip_batch(skip)
            from faust.types import TP

            tp = TP(skip.topic, skip.partition)
            # faust's gap is inclusive of its last offset: the batch is first..next_offset - 1
            last = skip.next_offset - 1
            await kafka_private.add_gap(self.app.consumer, tp, skip.first_offset, last)

        self.judge_bridge.track(record())

    async def _engine_start(self) -> None:
        from aiokafka.admin import AIOKafkaAdminClient

        self._guard_fetches()
        k = self.settings.kafka
        # the group's committed offsets as a Kafka admin tool reads them (OffsetFetch), on
        # our loop: faust's own record of what it committed changes even when a commit fails
        self._admin = AIOKafkaAdminClient(**aiokafka_kwargs(k), client_id=f"{k.client_id}-lag")
        await self._admin.start()
        try:
            await self.app.start()
        except BaseException:
            admin, self._admin = self._admin, None
            await admin.close()
            raise

    async def _engine_stop(self) -> None:
        try:
            await self.app.stop()  # drains the agent, flushes, commits
        finally:
            admin, self._admin = self._admin, None
            if admin is not None:
                await admin.close()

    def _engine_failure(self) -> str | None:
        if self.app.should_stop or self.app.crashed:
            return str(self.app.crash_reason)  # mode's public Service.crash_reason
        return None

    def _rebalancing(self) -> bool:
        return bool(self.app.rebalancing)

    async def _highwaters(self) -> dict[int, int]:
        consumer = self.app.consumer
        topic = self.settings.kafka.input_topic
        assigned = [tp for tp in consumer.assignment() if tp.topic == topic]
        highwaters = await consumer.highwaters(*assigned)
        return {tp.partition: high for tp, high in highwaters.items()}

    async def _committed(self, partitions: list[int]) -> dict[int, int | None]:
        from aiokafka import TopicPartition

        assert self._admin is not None
        tps = [TopicPartition(self._input, p) for p in partitions]
        got = await self._admin.list_consumer_group_offsets(
            self.settings.kafka.group_id, partitions=tps
        )
        done = {tp.partition: meta.offset for tp, meta in got.items()}
        return {p: done[p] if done.get(p, -1) >= 0 else None for p in partitions}
