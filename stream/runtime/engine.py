"""What every stream engine of the sidecar shares: one app object composing the parts.

An engine (faust in `stream.runtime.engine_faust`, aiokafka batches in
`stream.runtime.engine_aiokafka`) only moves bytes: it feeds each message to the shared
:class:`~stream.runtime.pipeline.Pipeline`, hands the :class:`~stream.runtime.pipeline.Result`
to the router and commits offsets once those records are published. An engine implements
the abstract hooks below. :class:`SidecarBase` composes the parts, the way quix-streams'
`Application` composes its managers, and runs the lifecycle (:meth:`SidecarBase.run`:
signals, the connect retry and heap trimming of `stream.runtime.lifecycle`, the run loop,
the drain at the stop):

- `router`, :class:`~stream.runtime.router.OutputRouter`: scorecards, alarms, dead letters
  (undecodable batches too) to their topics through the engine's `_send`; judge submits;
- `endpoints`, :class:`~stream.runtime.serving.Endpoints`: `/metrics`, `/healthz`, `/readyz`
  and the admin actions (`POST /drift/rebaseline`);
- `health`, :class:`~stream.runtime.health.Health`: readiness, lag and progress per partition;
- `fleet`, :class:`~stream.runtime.fleet.FleetDrift`: the group's drift stage;
- `judge_bridge`, :class:`~stream.runtime.judge_bridge.JudgeBridge`: sampled events to the
  judge thread and its results back;
- `canaries`, :class:`~stream.runtime.canary_runner.CanaryRunner`: judge canaries.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import logging
import signal
import time
from collections.abc import Iterable
from typing import Any

from exporters import MetricsServer, PromFamilies
from stream.runtime.canary_runner import CanaryRunner, check_canaries
from stream.runtime.dead_letters import Headers, dlq_headers
from stream.runtime.fetch_guard import SkippedBatch
from stream.runtime.fleet import FleetDrift
from stream.runtime.health import Health
from stream.runtime.judge_bridge import JudgeBridge
from stream.runtime.judging import JudgeService
from stream.runtime.judging_build import build_judging, sampler_for
from stream.runtime.lifecycle import connect, trim_heap_every
from stream.runtime.loop_health import install_log_throttle, watch_loop_lag
from stream.runtime.pipeline import Pipeline, Result
from stream.runtime.router import OutputRouter
from stream.runtime.serving import Endpoints
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
        prom: PromFamilies,
        judging: JudgeService | None = None,
    ) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.prom = prom
        self.judging = judging
        self._loop: asyncio.AbstractEventLoop | None = None
        self.health = Health(settings, prom, self._highwaters, self._committed,
                             self._rebalancing)  # fmt: skip
        self.fleet = FleetDrift(settings, pipeline, prom) if pipeline.drift is not None else None
        self.judge_bridge = JudgeBridge(
            judging, pipeline, prom, settings.kafka.scores_topic,
            lambda topic, key, value: self._send(topic, key, value, force=True),
            lambda alarm: self.router.publish_alarm(alarm, force=True),
        )  # fmt: skip
        # the engine's _send is looked up per record (a test may replace it)
        self.router = OutputRouter(settings.kafka, prom, lambda *a, **kw: self._send(*a, **kw),
                                   self.judge_bridge)  # fmt: skip
        self.endpoints = Endpoints(settings, prom, self.readiness, self.fleet)
        self.canaries = self._canary_runner()
        self._canary_task: asyncio.Task[None] | None = None

    def _canary_runner(self) -> CanaryRunner | None:
        """The judge canaries (judge.health.canaries), when there is a judge to watch."""
        c = self.settings.judge.health.canaries
        if self.judging is None or not c.enabled:
            return None
        check_canaries(c, self.settings.sampling.budget)  # ConfigError naming the field
        calls = self.settings.sampling.budget.calls_per_event
        return CanaryRunner(c, self.judging, self.prom, self.pipeline.sampler, calls)

    @classmethod
    def from_settings(cls, settings: Settings, prom: PromFamilies) -> SidecarBase:
        """Pipeline + sampler + judge service as configured (ConfigError on bad config)."""
        judging = build_judging(settings, prom)
        sampler = sampler_for(settings, judging)
        pressure = judging.fill if judging is not None else None
        pipeline = Pipeline(settings, prom, sampler=sampler, pressure=pressure)
        return cls(settings, pipeline, prom, judging)

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

    # ------------------------------------------------------------------ the parts' API
    async def route(
        self, result: Result, key: bytes | None, value: bytes | None, topic: str, partition: int,
        offset: int, headers: Iterable[Any] = (),
    ) -> None:  # fmt: skip
        """Publish what the pipeline produced for one message (:class:`OutputRouter`)."""
        await self.router.route(result, key, value, topic, partition, offset, headers)

    async def skip_batch(self, skip: SkippedBatch) -> None:
        """Dead-letter and count an undecodable batch (:class:`OutputRouter`)."""
        await self.router.skip_batch(skip)

    def readiness(self) -> tuple[bool, str]:
        return self.health.readiness()

    async def refresh_lag(self) -> None:
        await self.health.refresh()

    async def rebaseline(self) -> dict[str, Any]:
        """POST /drift/rebaseline (:class:`Endpoints`)."""
        return await self.endpoints.rebaseline()

    @property
    def server(self) -> MetricsServer | None:
        """The HTTP server while running (:class:`Endpoints`)."""
        return self.endpoints.server

    # ------------------------------------------------------------------ lifecycle
    async def _connect(self, stop: asyncio.Event) -> bool:
        """Topics, drift state, engine start; retried while the broker is away (False:
        stopped first, or a non-transient error)."""
        return await connect(self.settings, self.fleet, self._engine_start, stop)

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
        self.endpoints.start(loop)
        install_log_throttle()  # a broker outage must not flood the log (client libraries)
        loop_lag = asyncio.create_task(watch_loop_lag(self.prom.registry))
        try:
            if not await self._connect(stop):
                return 0 if stop.is_set() else 1
            return await self._serve(stop)
        finally:
            loop_lag.cancel()
            self.endpoints.stop()
            if install_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(sig)

    async def _serve(self, stop: asyncio.Event) -> int:
        s = self.settings
        self.health.started = True
        await self.health.refresh()
        lag_task = asyncio.create_task(self.health.watch())
        trim_task = asyncio.create_task(trim_heap_every(s.heap.trim_every_s))
        if self.canaries is not None:
            publish = functools.partial(self.router.publish_alarm, force=True)
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
