"""The Kafka sidecar: a faust-streaming agent (on aiokafka) around the shared Pipeline.

At-least-once: faust acks an event when the agent moves past it; the scorecard and
dead-letter records sent from the agent are *attached* to that offset and published
before the offset is committed (faust attachments), so a crash before a commit
means the event is processed again, never lost. A graceful stop (SIGTERM) stops
fetching, drains, flushes the producer, commits and returns 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from datetime import UTC, datetime
from typing import Any

import faust

from exporters import Metrics, MetricsServer
from stream.kafka_config import ensure_topics, faust_credentials
from stream.pipeline import Pipeline, Result
from stream.settings import Settings

__all__ = ["Sidecar", "dlq_headers"]

log = logging.getLogger(__name__)

_LAG_EVERY_S = 5.0


def dlq_headers(result: Result, topic: str, partition: int, offset: int) -> list[tuple[str, bytes]]:
    """Kafka-Connect-style error headers carried by each dead-letter record."""
    return [
        ("ragpulse.error.reason", (result.reason or "").encode()),
        ("ragpulse.error.detail", (result.detail or "")[:1000].encode()),
        ("ragpulse.source.topic", topic.encode()),
        ("ragpulse.source.partition", str(partition).encode()),
        ("ragpulse.source.offset", str(offset).encode()),
        ("ragpulse.error.time", datetime.now(UTC).isoformat().encode()),
    ]


class Sidecar:
    """Consumes the input topic with faust and serves /metrics, /healthz, /readyz."""

    def __init__(self, settings: Settings, pipeline: Pipeline, metrics: Metrics) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.metrics = metrics
        self.app = self._build_app()
        self._offsets: dict[int, int] = {}
        self._broker_ok = False
        self._started = False
        self.server: MetricsServer | None = None

    def _build_app(self) -> faust.App:
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
            web_enabled=False,
            store="memory://",
        )
        raw: dict[str, Any] = {
            "key_type": bytes,
            "value_type": bytes,
            "key_serializer": "raw",
            "value_serializer": "raw",
        }
        source = app.topic(k.input_topic, **raw)
        scores = app.topic(k.scores_topic, **raw)
        dlq = app.topic(k.dlq_topic, **raw)

        async def detect(stream: faust.StreamT) -> None:
            async for event in stream.events():
                msg = event.message
                self._offsets[msg.partition] = msg.offset
                result = self.pipeline.process(event.value)
                if result.outcome == "scored":
                    await scores.send(key=event.key, value=result.scorecard_bytes())
                elif result.outcome == "invalid":
                    headers = dlq_headers(result, msg.topic, msg.partition, msg.offset)
                    await dlq.send(key=event.key, value=event.value, headers=headers)
                    self.metrics.events.labels("dead_lettered").inc()

        app.agent(source, name="ragpulse.detect")(detect)
        return app

    def readiness(self) -> tuple[bool, str]:
        if not self._started:
            return False, "starting"
        if self.app.rebalancing:
            return False, "rebalancing"
        if not self._broker_ok:
            return False, "broker unreachable"
        return True, "ok"

    async def _watch_lag(self) -> None:
        while True:
            await asyncio.sleep(_LAG_EVERY_S if self._broker_ok else 1.0)
            await self.refresh_lag()

    async def refresh_lag(self) -> None:
        consumer = self.app.consumer
        assigned = [
            tp for tp in consumer.assignment() if tp.topic == self.settings.kafka.input_topic
        ]
        try:
            highwaters = await asyncio.wait_for(consumer.highwaters(*assigned), 5.0)
        except Exception as exc:  # any failure means we cannot see the broker now
            if self._broker_ok:
                log.warning("broker unreachable: %s", type(exc).__name__)
            self._broker_ok = False
            self.metrics.ready.set(0)
            return
        self._broker_ok = True
        self.metrics.ready.set(1 if self.readiness()[0] else 0)
        for tp, high in highwaters.items():
            done = self._offsets.get(tp.partition)
            lag = high - (done + 1) if done is not None else high
            self.metrics.consumer_lag.labels(str(tp.partition)).set(max(lag, 0))

    async def run(self, stop: asyncio.Event | None = None, install_signals: bool = True) -> int:
        """Run until `stop`, SIGTERM/SIGINT or a faust crash; return the exit code."""
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        if install_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
        s = self.settings
        self.server = MetricsServer(
            self.metrics.registry, self.readiness, s.server.host, s.server.port
        ).start()
        log.info("serving /metrics on %s/metrics", self.server.url)
        if s.kafka.create_topics:
            await ensure_topics(s.kafka)
        await self.app.start()
        self._started = True
        await self.refresh_lag()
        lag_task = asyncio.create_task(self._watch_lag())
        code = 0
        try:
            while not stop.is_set():
                if self.app.should_stop or self.app.crashed:
                    log.error("stream engine stopped: %s", self.app._crash_reason)
                    code = 1
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        finally:
            lag_task.cancel()
            started = time.monotonic()
            log.info("stopping: draining and committing (deadline %.0fs)", s.shutdown_timeout_s)
            try:
                await asyncio.wait_for(self.app.stop(), s.shutdown_timeout_s)
            except TimeoutError:
                log.error(
                    "drain deadline of %.0fs passed; uncommitted events are redone on restart",
                    s.shutdown_timeout_s,
                )
                code = code or 1
            log.info("stopped in %.1fs", time.monotonic() - started)
            self._started = False
            self.server.stop()
            if install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(sig)
        return code
