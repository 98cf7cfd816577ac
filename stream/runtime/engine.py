"""What every stream engine of the sidecar shares, composed of parts.

An engine (faust in `stream.runtime.engine_faust`, aiokafka batches in
`stream.runtime.engine_aiokafka`) only moves bytes: it feeds each message to the shared
:class:`~stream.runtime.pipeline.Pipeline`, hands the
:class:`~stream.runtime.pipeline.Result` to :meth:`SidecarBase.route` (scorecard, alarms,
dead letter, judge submit) and commits offsets once those records are published. An
engine implements the abstract hooks below; the rest is composed:

- :class:`~stream.runtime.health.Health`: `/readyz`, lag and progress per partition;
- :class:`~stream.runtime.fleet.FleetDrift`: the group's drift stage (observations out to
  the owner of each series; the series this replica owns, restored from the changelog);
- :class:`~stream.runtime.judge_bridge.JudgeBridge`: sampled events to the judge thread and
  its results back;
- the HTTP endpoints (`exporters.MetricsServer`), SIGTERM handling and the connect retry
  live here, in :meth:`SidecarBase.run`.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import json
import logging
import signal
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from exporters import Metrics, MetricsServer
from monitors.drift.alarms import AlarmEvent
from stream.platform.heap import trim_heap
from stream.runtime.canary_runner import CanaryRunner, check_canaries
from stream.runtime.dead_letters import Headers, dead_letter, dlq_headers, skipped_batch_letter
from stream.runtime.fetch_guard import SkippedBatch
from stream.runtime.fleet import FleetDrift
from stream.runtime.health import Health
from stream.runtime.judge_bridge import JudgeBridge
from stream.runtime.judging import JudgeService
from stream.runtime.judging_build import build_judging, sampler_for
from stream.runtime.kafka_config import ensure_topics
from stream.runtime.kafka_retry import Backoff, classify
from stream.runtime.loop_health import install_log_throttle, watch_loop_lag
from stream.runtime.pipeline import Pipeline, Result, turn_key
from stream.runtime.settings import Settings

__all__ = ["Headers", "SidecarBase", "dlq_headers"]

log = logging.getLogger(__name__)


class SidecarBase(abc.ABC):
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self.server: MetricsServer | None = None
        self.health = Health(settings, metrics, self._highwaters, self._committed,
                             self._rebalancing)  # fmt: skip
        self.fleet = FleetDrift(settings, pipeline, metrics) if pipeline.drift is not None else None
        self.judge_bridge = JudgeBridge(
            judging, pipeline, metrics, settings.kafka.scores_topic,
            lambda topic, key, value: self._send(topic, key, value, force=True),
            lambda alarm: self._publish_alarm(alarm, force=True),
        )  # fmt: skip
        self.canaries = self._canary_runner()
        self._canary_task: asyncio.Task[None] | None = None

    def _canary_runner(self) -> CanaryRunner | None:
        """The judge canaries (judge.health.canaries), when there is a judge to watch."""
        c = self.settings.judge.health.canaries
        if self.judging is None or not c.enabled:
            return None
        check_canaries(c, self.settings.sampling.budget)  # ConfigError naming the field
        calls = self.settings.sampling.budget.calls_per_event
        return CanaryRunner(c, self.judging, self.metrics, self.pipeline.sampler, calls)

    @classmethod
    def from_settings(cls, settings: Settings, metrics: Metrics) -> SidecarBase:
        """Pipeline + sampler + judge service as configured (ConfigError on bad config)."""
        judging = build_judging(settings, metrics)
        sampler = sampler_for(settings, judging)
        pressure = judging.fill if judging is not None else None
        pipeline = Pipeline(settings, metrics, sampler=sampler, pressure=pressure)
        return cls(settings, pipeline, metrics, judging)

    # ------------------------------------------------------------------ engine hooks
    @abc.abstractmethod
    async def _engine_start(self) -> None:
        """Connect and start consuming (raises while the broker is away: retried)."""

    @abc.abstractmethod
    async def _engine_stop(self) -> None:
        """Stop fetching, drain in-flight events, flush the producer, commit."""

    @abc.abstractmethod
    def _engine_failure(self) -> str | None:
        """Why the engine stopped on its own (None while it runs)."""

    @abc.abstractmethod
    def _rebalancing(self) -> bool:
        """True while the group rebalances (not ready)."""

    @abc.abstractmethod
    async def _highwaters(self) -> dict[int, int]:
        """High watermark per assigned input partition (raises when the broker is away)."""

    @abc.abstractmethod
    async def _committed(self, partitions: list[int]) -> dict[int, int | None]:
        """The group's committed offset per input partition (None: nothing committed)."""

    @abc.abstractmethod
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

    # ------------------------------------------------------------------ per event
    async def route(
        self, result: Result, key: bytes | None, value: bytes | None, topic: str, partition: int,
        offset: int, headers: Iterable[Any] = (),
    ) -> None:  # fmt: skip
        """Publish what the pipeline produced for one message (the same for every engine)."""
        k = self.settings.kafka
        if result.outcome == "scored":
            key = key if key is not None else turn_key(result)
            await self._send(k.scores_topic, key, result.scorecard_bytes())
            for alarm in result.alarms:
                await self._publish_alarm(alarm)
            if result.judge_event is not None:
                self.judge_bridge.submit(
                    result.judge_event, result.sample_reason or "base", result.judge_wait_s,
                    key, (result.scorecard or {}).get("failure_modes", ()),
                    repeat=result.judge_repeat,
                )  # fmt: skip
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
        m.slo.valid(False, n)
        value, dlq = skipped_batch_letter(skip, self.settings.kafka.dlq_max_value_bytes)
        await self._send(self.settings.kafka.dlq_topic, None, value, dlq)
        m.events.labels("dead_lettered").inc()

    async def _publish_alarm(self, alarm: AlarmEvent, force: bool = False) -> None:
        body = json.dumps(alarm.to_dict()).encode()
        await self._send(self.settings.kafka.alarms_topic, alarm.metric.encode(), body, force=force)

    # ------------------------------------------------------------------ health
    def readiness(self) -> tuple[bool, str]:
        return self.health.readiness()

    async def refresh_lag(self) -> None:
        await self.health.refresh()

    # ------------------------------------------------------------------ operator actions
    @staticmethod
    def _threadsafe(
        loop: asyncio.AbstractEventLoop, fn: Callable[[], Coroutine[Any, Any, Any]]
    ) -> Any:
        """Run `fn` on the event loop (where the pipeline lives) from the HTTP thread."""
        return asyncio.run_coroutine_threadsafe(fn(), loop).result(timeout=10)

    async def rebaseline(self) -> dict[str, Any]:
        """POST /drift/rebaseline: every series of the whole group takes its current level
        as the new normal (one command per partition; each owner applies it)."""
        if self.fleet is None:
            return {"rebaseline": "disabled", "partitions": 0}
        return await self.fleet.rebaseline()

    # ------------------------------------------------------------------ lifecycle
    async def _connect(self, stop: asyncio.Event) -> bool:
        """Topics, drift state, engine start; retried with backoff while the broker is away.

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
                if self.fleet is not None:
                    await self.fleet.start()
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

    async def _stop_app(self) -> None:
        if self._canary_task is not None:
            self._canary_task.cancel()
            await asyncio.gather(self._canary_task, return_exceptions=True)
        await self.judge_bridge.close(self.settings.shutdown_timeout_s / 2)
        await self._engine_stop()  # drains, flushes, commits
        if self.fleet is not None:  # after the drain: the last observations, final snapshots
            await self.fleet.stop()

    async def run(self, stop: asyncio.Event | None = None, install_signals: bool = True) -> int:
        """Run until `stop`, SIGTERM/SIGINT or an engine crash; return the exit code."""
        stop = stop or asyncio.Event()
        loop = self._loop = self.judge_bridge.loop = asyncio.get_running_loop()
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
            max_connections=s.server.max_connections,
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

    @staticmethod
    async def _trim_heap(every_s: float) -> None:
        """Return the C heap's free pages to the OS every `every_s` seconds (0: never)."""
        while every_s > 0:
            await asyncio.sleep(every_s)
            trim_heap()

    async def _serve(self, stop: asyncio.Event) -> int:
        s = self.settings
        self.health.started = True
        await self.health.refresh()
        lag_task = asyncio.create_task(self.health.watch())
        trim_task = asyncio.create_task(self._trim_heap(s.heap.trim_every_s))
        if self.canaries is not None:
            publish = functools.partial(self._publish_alarm, force=True)
            self._canary_task = asyncio.create_task(self.canaries.run(publish))
        code = 0
        try:
            while not stop.is_set():
                failure = self._engine_failure() or (
                    self.fleet.failure() if self.fleet is not None else None
                )
                if failure is not None:
                    log.error("stream engine stopped: %s", failure)
                    code = 1
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        finally:
            lag_task.cancel()
            trim_task.cancel()
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
            self.health.started = False
        return code
