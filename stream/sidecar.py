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
import json
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

import faust
from aiokafka import AIOKafkaProducer

from exporters import Metrics, MetricsServer
from monitors.alarms import AlarmEvent
from stream.drift_state import load_state, state_key
from stream.events import Event
from stream.judging import JudgeResult, JudgeService, build_judging
from stream.kafka_config import aiokafka_kwargs, ensure_topics, faust_credentials
from stream.pipeline import Pipeline, Result
from stream.retry import Backoff, classify
from stream.sampler import Sampler
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

    def __init__(
        self,
        settings: Settings,
        pipeline: Pipeline,
        metrics: Metrics,
        judging: JudgeService | None = None,
    ) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.metrics = metrics
        self.judging = judging
        self._judging_open = judging is not None
        self._updates: set[asyncio.Future[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.app = self._build_app()
        self._offsets: dict[int, int] = {}
        self._broker_ok = False
        self._started = False
        self.server: MetricsServer | None = None
        self._state_producer: AIOKafkaProducer | None = None

    @classmethod
    def from_settings(cls, settings: Settings, metrics: Metrics) -> Sidecar:
        """Pipeline + sampler + judge service as configured (ConfigError on bad config)."""
        judging = build_judging(settings, metrics)
        sampler = Sampler(settings.sampling) if judging is not None else None
        pressure = judging.fill if judging is not None else None
        pipeline = Pipeline(settings, metrics, sampler=sampler, pressure=pressure)
        return cls(settings, pipeline, metrics, judging)

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
            datadir=str(self.settings.data_dir),
        )
        raw: dict[str, Any] = {
            "key_type": bytes,
            "value_type": bytes,
            "key_serializer": "raw",
            "value_serializer": "raw",
        }
        source = app.topic(k.input_topic, **raw)
        scores = self._scores_topic = app.topic(k.scores_topic, **raw)
        dlq = app.topic(k.dlq_topic, **raw)
        self._alarms_topic = app.topic(k.alarms_topic, **raw)

        async def detect(stream: faust.StreamT) -> None:
            async for event in stream.events():
                msg = event.message
                self._offsets[msg.partition] = msg.offset
                result = self.pipeline.process(event.value)
                if result.outcome == "scored":
                    await scores.send(key=event.key, value=result.scorecard_bytes())
                    for alarm in result.alarms:
                        await self._publish_alarm(alarm)
                    if result.judge_event is not None:
                        self._submit(result.judge_event)
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

    async def _publish_alarm(self, alarm: AlarmEvent) -> None:
        body = json.dumps(alarm.to_dict()).encode()
        await self._alarms_topic.send(key=alarm.metric.encode(), value=body)

    @staticmethod
    def _threadsafe(
        loop: asyncio.AbstractEventLoop, fn: Callable[[], Coroutine[Any, Any, Any]]
    ) -> Any:
        """Run `fn` on the event loop (where the pipeline lives) from the HTTP thread."""
        return asyncio.run_coroutine_threadsafe(fn(), loop).result(timeout=10)

    async def rebaseline(self) -> dict[str, Any]:
        """POST /drift/rebaseline: every stream takes its current level as the new normal."""
        drift = self.pipeline.drift
        if drift is None:
            return {"rebaselined": 0, "cleared": []}
        cleared = drift.rebaseline()
        for alarm in cleared:
            self.pipeline.alarm(alarm)
            await self._publish_alarm(alarm)
        log.warning("drift: operator re-baseline of %d streams", len(drift.streams))
        return {"rebaselined": len(drift.streams), "cleared": [a.to_dict() for a in cleared]}

    async def _connect(self, stop: asyncio.Event) -> bool:
        """Topics, drift state, faust start; retried with backoff while the broker is away.

        /healthz stays 200 and /readyz 503 meanwhile, so Kubernetes neither restarts the
        container nor (in standalone mode) routes to it. Returns False when stopped first
        or on a non-transient error.
        """
        s = self.settings
        delays = Backoff().delays()
        attempt = 0
        while not stop.is_set():
            attempt += 1
            try:
                if s.kafka.create_topics:
                    await ensure_topics(s.kafka)
                await self._restore_drift()
                await self.app.start()
                return True
            except Exception as exc:
                if classify(exc) == "give_up":
                    log.error("cannot start: %s: %s", type(exc).__name__, exc)
                    return False
                delay = next(delays)
                if attempt <= 3 or attempt % 10 == 0:  # bounded logging while the broker is away
                    log.warning(
                        "broker %s unreachable (%s), attempt %d; retrying in %.1fs",
                        s.kafka.bootstrap_servers, type(exc).__name__, attempt, delay,
                    )  # fmt: skip
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), max(delay, 0.01))
        return False

    def _submit(self, event: Event) -> None:
        """Hand a sampled event to the judge; never waits (a full queue drops and counts)."""
        if self.judging is None:
            return
        if not self._judging_open:
            self.metrics.dropped.labels("shutdown").inc()
        elif not self.judging.submit(event, self._on_judged):
            self.metrics.dropped.labels("judge_backlog").inc()

    def _on_judged(self, result: JudgeResult) -> None:
        """Called on the judge thread: publish the scorecard update from the event loop."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._publish_update, result)

    def _publish_update(self, result: JudgeResult) -> None:
        sampler = self.pipeline.sampler
        if sampler is not None:
            calls = {id(o.call): o.call for o in result.outcomes if o.call is not None}
            sampler.record_cost(sum(c.cost_usd for c in calls.values()))
        drift = self.pipeline.drift
        if drift is not None:
            scores = {o.metric: o.score for o in result.outcomes if o.score is not None}
            for alarm in drift.observe_scores(scores, result.service):
                self.pipeline.alarm(alarm)
                self._track(self._publish_alarm(alarm))
        body = json.dumps(result.scorecard_update()).encode()
        self._track(self._scores_topic.send(key=result.event_id.encode(), value=body, force=True))

    def _track(self, aw: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(aw)
        self._updates.add(task)
        task.add_done_callback(self._updates.discard)

    async def _close_judging(self, timeout_s: float) -> None:
        """Stop taking sampled events, let queued judging finish within `timeout_s`, count
        what is left as dropped{reason="shutdown"}, and publish the updates produced."""
        if self.judging is None:
            return
        self._judging_open = False
        left = await asyncio.to_thread(self.judging.close, timeout_s)
        if left:
            self.metrics.dropped.labels("shutdown").inc(left)
            log.warning("shutdown: %d sampled events were not judged", left)
        await asyncio.sleep(0)  # let the updates scheduled by the judge thread start
        if self._updates:
            await asyncio.gather(*self._updates, return_exceptions=True)

    async def _stop_app(self) -> None:
        await self._close_judging(self.settings.shutdown_timeout_s / 2)
        await self.app.stop()  # drains the agent, flushes, commits
        try:
            await self.snapshot_drift()  # after the drain: includes every committed event
        finally:
            if self._state_producer is not None:
                await self._state_producer.stop()

    async def _restore_drift(self) -> None:
        drift = self.pipeline.drift
        if drift is None:
            return
        state = await load_state(self.settings.kafka)
        restored = drift.restore(state)
        for key in drift.active():
            self.metrics.drift_alarm.labels(key.metric, key.detector, key.service).set(1)
        log.info("drift state: restored %d streams, %d alarms up", restored, len(drift.active()))

    async def snapshot_drift(self) -> None:
        drift = self.pipeline.drift
        if drift is None:
            return
        if self._state_producer is None:
            self._state_producer = AIOKafkaProducer(**aiokafka_kwargs(self.settings.kafka))
            await self._state_producer.start()
        k = self.settings.kafka
        for sid, blob in drift.snapshot().items():
            await self._state_producer.send(k.state_topic, blob, key=state_key(k.group_id, sid))
        await self._state_producer.flush()

    async def _snapshot_loop(self) -> None:
        every = self.settings.drift.snapshot_every_s
        while True:
            await asyncio.sleep(every)
            try:
                await self.snapshot_drift()
            except Exception as exc:  # retried at the next period; never stops the stream
                log.warning("drift snapshot failed: %s", type(exc).__name__)

    async def run(self, stop: asyncio.Event | None = None, install_signals: bool = True) -> int:
        """Run until `stop`, SIGTERM/SIGINT or a faust crash; return the exit code."""
        stop = stop or asyncio.Event()
        loop = self._loop = asyncio.get_running_loop()
        if install_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
        s = self.settings
        actions = {"/drift/rebaseline": lambda: self._threadsafe(loop, self.rebaseline)}
        self.server = MetricsServer(
            self.metrics.registry, self.readiness, s.server.host, s.server.port, actions
        ).start()
        log.info("serving /metrics on %s/metrics", self.server.url)
        try:
            if not await self._connect(stop):
                return 0 if stop.is_set() else 1
            return await self._serve(stop)
        finally:
            self.server.stop()
            if install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(sig)

    async def _serve(self, stop: asyncio.Event) -> int:
        s = self.settings
        self._started = True
        await self.refresh_lag()
        lag_task = asyncio.create_task(self._watch_lag())
        snap_task = asyncio.create_task(self._snapshot_loop())
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
            snap_task.cancel()
            started = time.monotonic()
            log.info("stopping: draining and committing (deadline %.0fs)", s.shutdown_timeout_s)
            try:
                await asyncio.wait_for(self._stop_app(), s.shutdown_timeout_s)
            except TimeoutError:
                log.error(
                    "drain deadline of %.0fs passed; uncommitted events are redone on restart",
                    s.shutdown_timeout_s,
                )
                code = code or 1
            log.info("stopped in %.1fs", time.monotonic() - started)
            self._started = False
        return code
