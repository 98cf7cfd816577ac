"""The drift stage of a sidecar in a consumer group (one part of `SidecarBase`).

Per event, on every replica: the pipeline counts each series' indicators into an
:class:`~monitors.fleet.ObservationBuffer` (and the judge bridge its scores). Every
`drift.interval_s` the closed intervals go to the observations topic, key = series id.
Per series, on its owner: :class:`~stream.runtime.fleet_owner.DriftOwner` merges them and
runs the detectors. `POST /drift/rebaseline` on any replica publishes one command per
partition, so every owner re-baselines its series: one call for the whole group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from aiokafka import AIOKafkaProducer

from exporters import PromFamilies
from monitors.fleet import RECORD_VERSION, Command, ObservationBuffer, encode
from stream.runtime.fleet_owner import DriftOwner
from stream.runtime.fleet_topics import ensure_fleet_topics
from stream.runtime.kafka_config import aiokafka_kwargs
from stream.runtime.pipeline import Pipeline
from stream.runtime.record_size import record_bytes
from stream.runtime.settings import Settings

__all__ = ["FleetDrift"]

log = logging.getLogger(__name__)


class FleetDrift:
    def __init__(self, settings: Settings, pipeline: Pipeline, prom: PromFamilies) -> None:
        self.settings, self.prom = settings, prom
        k, d = settings.kafka, settings.drift
        self.buffer = ObservationBuffer(k.group_id, d.interval_s)
        pipeline.observe_into(self.buffer)
        self.owner = DriftOwner(settings, prom, pipeline.alarm)
        self.partitions = 0
        self._producer: AIOKafkaProducer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._producer is not None:
            return
        k = self.settings.kafka
        self.partitions = await ensure_fleet_topics(k)
        producer = AIOKafkaProducer(**aiokafka_kwargs(k), client_id=f"{k.client_id}-drift",
                                    acks="all", linger_ms=5,
                                    max_request_size=k.max_record_bytes)  # fmt: skip
        await producer.start()
        try:
            await self.owner.start(producer)
        except BaseException:
            await producer.stop()
            raise
        self._producer = producer
        self._task = asyncio.create_task(self._publish_loop(), name="ragpulse.observations")

    async def _publish_loop(self) -> None:
        every = max(0.05, self.settings.drift.interval_s / 4)
        while True:
            await asyncio.sleep(every)
            try:
                await self.flush(time.time())
            except Exception as exc:  # counted in ragpulse_observation_records_unsent_total
                log.warning("observations not published: %s", type(exc).__name__)

    async def flush(self, now: float, everything: bool = False) -> int:
        """Publish the buffer's closed intervals (all of them: `everything`); records sent."""
        producer = self._producer
        if producer is None:
            return 0
        k, fm = self.settings.kafka, self.prom.fleet
        records = self.buffer.flush(now, everything)
        sent = 0
        try:
            futures = []
            for rec in records:
                value, key = encode(rec), rec.series.encode()
                if record_bytes(key, value) > k.max_record_bytes:  # sized before it is sent
                    self.prom.output_refused.labels("observation", "too_large",
                                                       "dropped").inc()  # fmt: skip
                    continue
                futures.append(await producer.send(k.observations_topic, value, key=key))
                fm.observation_bytes.inc(len(value))
            if futures:
                await asyncio.gather(*futures)
            sent = len(futures)
        finally:  # a broker away: the intervals are lost, and counted
            fm.observations_published.inc(sent)
            if sent < len(records):
                fm.observations_unsent.inc(len(records) - sent)
        return sent

    async def rebaseline(self) -> dict[str, Any]:
        """One command per observation partition; each owner applies it to its series."""
        assert self._producer is not None
        k = self.settings.kafka
        cmd = Command(v=RECORD_VERSION, group=k.group_id, id=uuid.uuid4().hex,
                      action="rebaseline", at=int(time.time() * 1000))  # fmt: skip
        value = encode(cmd)
        for p in range(self.partitions):
            await (await self._producer.send(k.observations_topic, value, key=b"__command__",
                                             partition=p))  # fmt: skip
        log.warning("drift: operator re-baseline requested for the whole group (command %s)",
                    cmd.id)  # fmt: skip
        return {"rebaseline": "requested", "command_id": cmd.id, "partitions": self.partitions,
                "scope": "every drift series of the consumer group"}  # fmt: skip

    def failure(self) -> str | None:
        if self._task is not None and self._task.done() and not self._task.cancelled():
            return "observation publisher ended"
        return self.owner.failure()

    async def stop(self) -> None:
        """After the engine's drain: the last observations out, final snapshots, leave."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._producer is None:
            return
        try:
            with contextlib.suppress(Exception):
                await self.flush(time.time(), everything=True)
            await self.owner.stop()
        finally:
            await self._producer.stop()
            self._producer = None
