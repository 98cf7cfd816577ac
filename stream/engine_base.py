"""What every stream engine of the sidecar shares: HTTP endpoints, lag, judging, drift state.

An engine (faust in `stream.sidecar`, aiokafka batches in `stream.engine_aiokafka`) only
moves bytes: it feeds each message to the shared :class:`~stream.pipeline.Pipeline`,
hands the :class:`~stream.pipeline.Result` to :meth:`SidecarBase.route` (scorecard,
alarms, dead letter, judge submit) and commits offsets once those records are published.
Engines implement the six `_engine_*`/`_send`/`_highwaters` hooks below.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from aiokafka import AIOKafkaProducer

from exporters import Metrics, MetricsServer
from monitors.alarms import AlarmEvent
from stream.dead_letters import Headers, dead_letter, dlq_headers, skipped_batch_letter
from stream.drift_state import load_state, state_key
from stream.events import Event
from stream.fetch_guard import SkippedBatch
from stream.judging import JudgeResult, JudgeService, build_judging
from stream.kafka_config import aiokafka_kwargs, ensure_topics
from stream.loop_health import install_log_throttle, watch_loop_lag
from stream.pipeline import Pipeline, Result
from stream.progress import ProgressTracker
from stream.retry import Backoff, classify
from stream.sampler import Sampler
from stream.settings import Settings

__all__ = ["Headers", "SidecarBase", "dlq_headers"]

log = logging.getLogger("stream.sidecar")

_LAG_EVERY_S = 5.0


class SidecarBase:
    """Consumes the input topic through an engine and serves /metrics, /healthz, /readyz."""

    engine = "base"

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
        self._offsets: dict[int, int] = {}
        self.progress = ProgressTracker(settings.progress.stall_after_s)
        self._broker_ok = False
        self._broker_lost: float | None = None
        self._started = False
        self.server: MetricsServer | None = None
        self._state_producer: AIOKafkaProducer | None = None

    @classmethod
    def from_settings(cls, settings: Settings, metrics: Metrics) -> SidecarBase:
        """Pipeline + sampler + judge service as configured (ConfigError on bad config)."""
        judging = build_judging(settings, metrics)
        sampler = Sampler(settings.sampling) if judging is not None else None
        pressure = judging.fill if judging is not None else None
        pipeline = Pipeline(settings, metrics, sampler=sampler, pressure=pressure)
        return cls(settings, pipeline, metrics, judging)

    # ------------------------------------------------------------------ engine hooks
    async def _engine_start(self) -> None:
        raise NotImplementedError

    async def _engine_stop(self) -> None:
        """Stop fetching, drain in-flight events, flush the producer, commit."""
        raise NotImplementedError

    def _engine_failure(self) -> str | None:
        """Why the engine stopped on its own (None while it runs)."""
        raise NotImplementedError

    def _rebalancing(self) -> bool:
        raise NotImplementedError

    async def _highwaters(self) -> dict[int, int]:
        """High watermark per assigned input partition (raises when the broker is away)."""
        raise NotImplementedError

    async def _committed(self, partitions: list[int]) -> dict[int, int | None]:
        """The group's committed offset per input partition (None: nothing committed)."""
        raise NotImplementedError

    async def _send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers | None = None,
        force: bool = False,
    ) -> Any:
        """Publish one record; it is delivered before the current event's offset is committed
        (`force`: outside any event, e.g. a judge update)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ per event
    async def route(
        self, result: Result, key: bytes | None, value: bytes | None, topic: str, partition: int,
        offset: int, headers: Iterable[Any] = (),
    ) -> None:  # fmt: skip
        """Publish what the pipeline produced for one message (the same for every engine)."""
        k = self.settings.kafka
        if result.outcome == "scored":
            await self._send(k.scores_topic, key, result.scorecard_bytes())
            for alarm in result.alarms:
                await self._publish_alarm(alarm)
            if result.judge_event is not None:
                self._submit(result.judge_event, result.sample_reason or "base")
        elif result.outcome == "invalid":
            key, value, dlq = dead_letter(result, key, value, topic, partition, offset,
                                          headers, k.dlq_max_value_bytes)  # fmt: skip
            await self._send(k.dlq_topic, key, value, dlq)
            self.metrics.events.labels("dead_lettered").inc()

    async def skip_batch(self, skip: SkippedBatch) -> None:
        """An undecodable batch: its offsets count as read and invalid, its raw bytes go to
        the dead-letter topic (one record, first/next offsets in the headers)."""
        m, n = self.metrics, skip.count
        m.events.labels("consumed").inc(n)
        m.events.labels("invalid").inc(n)
        m.invalid.labels("undecodable_batch").inc(n)
        value, dlq = skipped_batch_letter(skip, self.settings.kafka.dlq_max_value_bytes)
        await self._send(self.settings.kafka.dlq_topic, None, value, dlq)
        m.events.labels("dead_lettered").inc()

    def readiness(self) -> tuple[bool, str]:
        if not self._started:
            return False, "starting"
        if self._rebalancing():
            return False, "rebalancing"
        if not self._broker_ok:
            return False, "broker unreachable"
        if self.settings.progress.readiness and self.progress.stalled:
            return False, f"stalled partitions {self.progress.stalled}"
        return True, "ok"

    async def _watch_lag(self) -> None:
        while True:
            await asyncio.sleep(_LAG_EVERY_S if self._broker_ok else 1.0)
            await self.refresh_lag()

    async def refresh_lag(self) -> None:
        try:
            highwaters = await asyncio.wait_for(self._highwaters(), 5.0)
        except Exception as exc:  # any failure means we cannot see the broker now
            if self._broker_ok:
                log.warning("broker unreachable: %s", type(exc).__name__)
                self._broker_lost = time.monotonic()
            self._broker_ok = False
            self.metrics.ready.set(0)
            return
        if not self._broker_ok and self._broker_lost is not None:
            log.warning("broker reachable again after %.1fs", time.monotonic() - self._broker_lost)
            self._broker_lost = None
        self._broker_ok = True
        try:  # the group coordinator may be slow while the broker answers: keep what we had
            committed = await asyncio.wait_for(self._committed(sorted(highwaters)), 5.0)
        except Exception as exc:
            log.warning("committed offsets unavailable: %s", type(exc).__name__)
            committed = {p: self.progress.committed(p) for p in highwaters}
        m = self.metrics
        for partition in self.progress.retain(set(highwaters)):
            families = (m.consumer_lag, m.consumer_stalled, m.consumer_committed, m.consumer_end)
            for family in families:
                with contextlib.suppress(KeyError):
                    family.remove(str(partition))
        before = set(self.progress.stalled)
        for partition, high in highwaters.items():
            done = committed.get(partition)
            state = self.progress.update(partition, done, high)
            label = str(partition)
            if state.lag is None:  # nothing committed yet: no lag sample, as in the admin tools
                with contextlib.suppress(KeyError):
                    m.consumer_lag.remove(label)
            else:
                m.consumer_lag.labels(label).set(state.lag)
            m.consumer_end.labels(label).set(high)
            if done is not None:
                m.consumer_committed.labels(label).set(done)
            m.consumer_stalled.labels(label).set(1 if state.stalled else 0)
            if state.stalled and partition not in before:
                log.warning("partition %d stalled: lag %d, committed offset %s unmoved for %.0fs",
                            partition, state.lag, done, self.progress.stall_after_s)  # fmt: skip
        m.ready.set(1 if self.readiness()[0] else 0)

    async def _publish_alarm(self, alarm: AlarmEvent, force: bool = False) -> None:
        body = json.dumps(alarm.to_dict()).encode()
        await self._send(self.settings.kafka.alarms_topic, alarm.metric.encode(), body, force=force)

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
            await self._publish_alarm(alarm, force=True)
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
                await self._engine_start()
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

    def _submit(self, event: Event, reason: str = "base") -> None:
        """Hand a sampled event to the judge; never waits (a full queue drops and counts)."""
        if self.judging is None:
            return
        if not self._judging_open:
            self.metrics.dropped.labels("shutdown").inc()
        elif not self.judging.submit(event, self._on_judged, reason):
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
        if drift is not None and result.population:  # boosted turns would bias the streams
            scores = {o.metric: o.score for o in result.outcomes if o.score is not None}
            for alarm in drift.observe_scores(scores, result.service):
                self.pipeline.alarm(alarm)
                self._track(self._publish_alarm(alarm, force=True))
        body = json.dumps(result.scorecard_update()).encode()
        key = result.event_id.encode()
        self._track(self._send(self.settings.kafka.scores_topic, key, body, force=True))

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
        await self._engine_stop()  # drains, flushes, commits
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
        admin = s.server.admin  # actions only when enabled, always behind the bearer token
        actions = {"/drift/rebaseline": lambda: self._threadsafe(loop, self.rebaseline)}
        self.server = MetricsServer(
            self.metrics.registry, self.readiness, s.server.host, s.server.port,
            actions if admin.enabled else None,
            token=admin.token.get_secret_value() if admin.token is not None else None,
            admin_host=admin.host, admin_port=admin.port,
        ).start()  # fmt: skip
        log.info("serving /metrics on %s/metrics", self.server.url)
        if admin.enabled:
            where = self.server.admin_url or self.server.url
            log.info("admin actions (bearer token) on %s: %s", where, ", ".join(actions))
        install_log_throttle()  # a broker outage must not flood the log (client libraries)
        loop_lag = asyncio.create_task(watch_loop_lag(self.metrics.registry))
        try:
            if not await self._connect(stop):
                return 0 if stop.is_set() else 1
            return await self._serve(stop)
        finally:
            loop_lag.cancel()
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
                failure = self._engine_failure()
                if failure is not None:
                    log.error("stream engine stopped: %s", failure)
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
