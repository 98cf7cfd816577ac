"""The owner side of the drift stage on Kafka: a second consumer group on the observations.

The replicas join ``<group_id>.drift`` on the observations topic; Kafka's assignment makes
each observation partition, and so each series, owned by exactly one replica. On
assignment the owner restores its partitions' series from the changelog (validated data;
a record that fails is counted in `ragpulse_state_records_rejected_total{reason}` and the
series starts fresh) and seeks to the offset the states cover; on revocation it writes a
final snapshot first. Alarm transitions go through an outbox in the state: snapshot
(outbox full), publish on the alarms topic, snapshot (outbox empty), so a crash between
the two re-publishes the same `alarm_id` instead of raising a second alarm.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition

from exporters import PromFamilies
from monitors.drift.monitor import DriftMonitor
from monitors.fleet import (
    FleetOwner,
    OwnedSeries,
    RecordError,
    decode_control_or_observation,
    decode_state,
    encode_state,
)
from stream.runtime.fleet_changelog import read_partitions, state_key, write_state
from stream.runtime.kafka_config import aiokafka_kwargs
from stream.runtime.record_size import record_bytes
from stream.runtime.settings import Settings

__all__ = ["DriftOwner"]

log = logging.getLogger(__name__)


class _Listener(ConsumerRebalanceListener):
    def __init__(self, owner: DriftOwner) -> None:
        self.owner = owner

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        await self.owner.revoked(sorted(tp.partition for tp in revoked))

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        await self.owner.assigned(sorted(tp.partition for tp in assigned))


class DriftOwner:
    def __init__(self, settings: Settings, prom: PromFamilies, export: Any) -> None:
        """`export(alarm)`: the pipeline's alarm export (gauge, counter, OTel, log line)."""
        self.settings, self.prom, self._export = settings, prom, export
        self.monitor = DriftMonitor(settings.drift, prom.cap_service,
                                    on_stream=self._declare)  # fmt: skip
        self.owner = FleetOwner(settings.drift, self.monitor, settings.kafka.group_id)
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._shown: set[tuple[str, str, str]] = set()  # gauge label sets this replica exports
        self._stopping = False
        self._last_snapshot = time.monotonic()

    def _declare(self, key: Any) -> None:
        labels = (key.metric, key.detector, key.service)
        self.prom.drift_alarm.labels(*labels)
        self.prom.drift_alarms.labels(*labels)
        self._shown.add(labels)

    # ------------------------------------------------------------------ lifecycle
    async def start(self, producer: AIOKafkaProducer) -> None:
        k = self.settings.kafka
        self._producer = producer
        consumer = AIOKafkaConsumer(
            **aiokafka_kwargs(k), client_id=f"{k.client_id}-drift", group_id=f"{k.group_id}.drift",
            enable_auto_commit=False, auto_offset_reset="earliest",
            session_timeout_ms=int(k.session_timeout_s * 1000),
            heartbeat_interval_ms=int(k.heartbeat_interval_s * 1000),
            rebalance_timeout_ms=int(k.rebalance_timeout_s * 1000),
            max_partition_fetch_bytes=max(1_048_576, k.max_record_bytes + 1024),
        )  # fmt: skip
        await consumer.start()
        consumer.subscribe([k.observations_topic], listener=_Listener(self))
        self._consumer = consumer
        self._task = asyncio.create_task(self._loop(), name="ragpulse.drift-owner")

    async def stop(self) -> None:
        """Final snapshots of every owned series, then leave the group."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        async with self._lock:
            with contextlib.suppress(Exception):
                await self._release(time.time())
                await self._snapshot(self.owner.series(), commit=True)
        if self._consumer is not None:
            await self._consumer.stop()  # revokes (another snapshot of nothing) and leaves

    def failure(self) -> str | None:
        task = self._task
        if task is None or not task.done() or task.cancelled():
            return None
        exc = task.exception()
        return f"drift owner: {type(exc).__name__}: {exc}" if exc else "drift owner ended"

    # ------------------------------------------------------------------ ownership
    async def assigned(self, partitions: list[int]) -> None:
        async with self._lock:
            fm = self.prom.fleet
            states = await self._read_states(partitions)
            for p in partitions:
                self.owner.assign(p)
                for sid, raw in states[p].items():
                    if raw is None:
                        continue
                    try:
                        rec = decode_state(raw, self.settings.kafka.group_id, sid,
                                           self.settings.kafka.max_record_bytes)  # fmt: skip
                        if self.owner.restore(p, rec) is None:
                            log.info("drift state of series %s ignored: not configured now",
                                     sid[:120])  # fmt: skip
                    except Exception as exc:
                        reason = getattr(exc, "reason", "schema")
                        fm.state_rejected.labels(reason).inc()
                        log.warning("drift state of series %s refused (%s); it starts fresh",
                                    sid[:120], reason)  # fmt: skip
                try:
                    await self._seek(p)
                except Exception as exc:  # the broker away: aiokafka's own position stands
                    log.warning("drift partition %d not positioned: %s", p, type(exc).__name__)
            self._show_gauges()
            up = self.owner.active(lambda *labels: None)
            log.info("drift owner: partitions %s, %d series restored, %d alarms up",
                     partitions, len(self.owner.series()), up)  # fmt: skip
            with contextlib.suppress(Exception):  # retried by the next tick (the outbox stays)
                await self._publish_outboxes(self.owner.commanded())

    async def _seek(self, partition: int) -> None:
        """Read a new partition from the offset its states cover, else from the group's
        commit, else from the start: always an explicit position, because aiokafka may
        have fetched (and this loop skipped as not owned) records of the partition while
        it was being restored."""
        consumer = self._consumer
        if consumer is None:
            return
        tp = TopicPartition(self.settings.kafka.observations_topic, partition)
        offset = self.owner.seek_offset(partition)
        if offset is None:
            offset = await consumer.committed(tp)
        if offset is None:
            await consumer.seek_to_beginning(tp)
        else:
            consumer.seek(tp, offset)

    async def _read_states(self, partitions: list[int]) -> dict[int, dict[str, bytes | None]]:
        """The changelog of `partitions`; three tries, then the series start fresh (logged)."""
        for attempt in range(3):
            try:
                return await read_partitions(self.settings.kafka, partitions)
            except Exception as exc:  # the broker away: a listener must not raise
                log.warning("drift changelog unreadable (%s), attempt %d", type(exc).__name__,
                            attempt + 1)  # fmt: skip
                await asyncio.sleep(1.0)
        log.error("drift changelog of partitions %s unreadable: their series start fresh",
                  partitions)  # fmt: skip
        return {p: {} for p in partitions}

    async def revoked(self, partitions: list[int]) -> None:
        async with self._lock:
            gone = [s for p in partitions for s in self.owner.partitions.get(p, {}).values()]
            with contextlib.suppress(Exception):  # the next owner replays from older states
                await self._snapshot(gone, commit=True)
            for p in partitions:
                self.owner.revoke(p)
            # the gauges stay until the next assignment (often the same partitions)

    def _show_gauges(self) -> None:
        owned: set[tuple[str, str, str]] = set()
        for stream in self.monitor.streams.values():
            labels = (stream.key.metric, stream.key.detector, stream.key.service)
            owned.add(labels)
            self.prom.drift_alarm.labels(*labels).set(1 if stream.active else 0)
        for labels in self._shown - owned:
            with contextlib.suppress(KeyError):
                self.prom.drift_alarm.remove(*labels)
        self._shown = owned
        fm = self.prom.fleet
        fm.owned_partitions.set(len(self.owner.partitions))
        fm.owned_series.set(len(self.owner.series()))

    # ------------------------------------------------------------------ the loop
    async def _loop(self) -> None:
        """Records in, due intervals out, snapshots on time; a broker error is logged
        (throttled) and retried on the next tick, never the end of the sidecar."""
        while not self._stopping:
            try:
                await self._tick()
            except Exception as exc:
                log.warning("drift owner: %s; retrying", type(exc).__name__)
                await asyncio.sleep(1.0)

    async def _tick(self) -> None:
        assert self._consumer is not None
        consumer, fm = self._consumer, self.prom.fleet
        k = self.settings.kafka
        batch = await consumer.getmany(timeout_ms=200, max_records=2000)
        async with self._lock:
            now = time.time()
            for tp, records in batch.items():
                for rec in records:
                    try:
                        obs = decode_control_or_observation(rec.value, k.group_id,
                                                            k.max_record_bytes)  # fmt: skip
                    except RecordError as exc:
                        fm.observation_rejected.labels(exc.reason).inc()
                        fm.observations.labels("rejected").inc()
                        continue
                    fm.observations.labels(self.owner.offer(tp.partition, rec.offset, obs,
                                                            now)).inc()  # fmt: skip
            await self._release(now)
            await self._publish_outboxes(self.owner.commanded())
            if time.monotonic() - self._last_snapshot >= self.settings.drift.snapshot_every_s:
                await self._snapshot([s for s in self.owner.series() if s.dirty], commit=True)
        fm.owned_series.set(len(self.owner.series()))

    async def _release(self, now: float) -> None:
        changed = self.owner.release(now)
        for owned, _events in changed:  # the outbox is in the changelog before publishing
            await self._snapshot([owned])
        self._export_new()
        for owned, _events in changed:
            await self._publish(owned)

    def _export_new(self) -> None:
        """Each new transition once: gauge, counter, OTel event, log line."""
        exports, self.owner.exports = self.owner.exports, []
        for event in exports:
            self._export(event)

    async def _publish_outboxes(self, series: list[OwnedSeries]) -> None:
        """Transitions not yet confirmed published (after a command, or restored)."""
        self._export_new()  # a command's transitions; a restored outbox was exported before
        for owned in series:
            await self._snapshot([owned])
            await self._publish(owned)

    async def _publish(self, owned: OwnedSeries) -> None:
        assert self._producer is not None
        k = self.settings.kafka
        for alarm in owned.outbox:
            body, key = json.dumps(alarm).encode(), alarm["metric"].encode()
            if record_bytes(key, body) > k.max_record_bytes:  # never for the schema's fields
                self.prom.output_refused.labels("alarm", "too_large", "dropped").inc()
                continue
            await (await self._producer.send(k.alarms_topic, body, key=key))
        owned.outbox = []
        await self._snapshot([owned])

    async def _snapshot(self, series: list[OwnedSeries], commit: bool = False) -> None:
        assert self._producer is not None
        k, fm = self.settings.kafka, self.prom.fleet
        for owned in series:
            try:
                value = encode_state(self.owner.record(owned))
            except Exception as exc:
                fm.state_too_large.inc()
                log.warning("drift state of %s not written: %s", owned.sid[:120],
                            type(exc).__name__)  # fmt: skip
                continue
            if record_bytes(state_key(k.group_id, owned.sid), value) > k.max_record_bytes:
                fm.state_too_large.inc()
                self.prom.output_refused.labels("state", "too_large", "dropped").inc()
                log.warning("drift state of %s is %d bytes, over kafka.max_record_bytes; not"
                            " written", owned.sid[:120], len(value))  # fmt: skip
                continue
            await write_state(self._producer, k, owned.partition, owned.sid, value)
            fm.state_written.inc()
            owned.dirty = False
        if commit:
            self._last_snapshot = time.monotonic()
            await self._commit()

    async def _commit(self) -> None:
        consumer = self._consumer
        if consumer is None:
            return
        offsets = {}
        topic = self.settings.kafka.observations_topic
        for p in self.owner.partitions:
            off = self.owner.seek_offset(p)
            tp = TopicPartition(topic, p)
            if off is None:
                with contextlib.suppress(Exception):
                    off = await consumer.position(tp)
            if off:
                offsets[tp] = off
        if offsets:
            with contextlib.suppress(Exception):  # a rebalance in flight: the next commit
                await asyncio.wait_for(consumer.commit(offsets), 5.0)
