"""Judging sampled events off the detector path, with bounded memory.

`JudgeService` runs the judge metrics on its own thread and event loop, so neither a
slow LLM endpoint nor the CPU-bound embedded judge can delay the detector path or the
offset commits. `submit` never blocks: when `queue_size` events are already waiting or
in flight it refuses (the caller counts `ragpulse_dropped_total{reason="judge_backlog"}`
and the sampler lowers its rate from `fill()`). What a judged event exports, and why
boosted turns stay out of the population aggregates: :mod:`exporters.judge_metrics`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from opentelemetry import trace

from exporters.judge_metrics import (
    CANARY,
    POPULATION_REASONS,
    JudgeExporter,
    JudgeResult,
    RollingMeans,
    is_population,
)
from exporters.otel import OtelEvents
from exporters.prometheus import PromFamilies
from monitors.judges.base import EmbeddedJudge, LLMJudge
from monitors.judges.consistency import compare, shuffled
from monitors.judges.settings import CompoundSettings
from monitors.metrics.base import JudgeMetric, MetricOutcome
from stream.contract.events import Event
from stream.runtime.priority_slots import PrioritySlots

__all__ = [
    "CANARY",
    "POPULATION_REASONS",
    "JudgeResult",
    "JudgeService",
    "RollingMeans",
    "is_population",
]

log = logging.getLogger(__name__)

GateEvaluator = Callable[[Sequence[MetricOutcome]], Mapping[str, bool | None]]


class JudgeService:
    def __init__(
        self,
        judge: LLMJudge | EmbeddedJudge,
        judge_metrics: Sequence[JudgeMetric],
        queue_size: int,
        concurrency: int,
        prom: PromFamilies | None = None,
        events: OtelEvents | None = None,
        gates: GateEvaluator | None = None,
        windows_s: Mapping[str, float] | None = None,
        clock: Callable[[], float] = time.time,
        tracer: trace.Tracer | None = None,
        compound: Mapping[str, float] | None = None,
        floor: Callable[[str], float] | None = None,
    ) -> None:
        self.judge = judge
        #: the gate floor of each metric output (self-consistency flips, canary agreement)
        self.floor = floor or (lambda metric: 0.5)
        self.tracer = tracer or trace.get_tracer("ragpulse")
        self.judge_metrics = list(judge_metrics)
        self.capacity = queue_size
        self.concurrency = concurrency
        self.prom = prom
        self.otel = events or OtelEvents()
        self.gates = gates
        windows = windows_s or {"5m": 300.0, "1h": 3600.0}
        self.compound = CompoundSettings(weights=dict(compound or {}))
        self.exporter = JudgeExporter(judge.name, prom, self.otel, windows, clock)
        self.exporter.declare_compound(self.compound.weights)
        if prom is not None:
            prom.judge_health.declare_judge(judge.name)
        self.rolling = self.exporter.rolling
        self._pending = 0
        self._sleeping = 0  # queued, waiting out their wait_s before a slot
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ragpulse-judge")
        self._thread.daemon = True
        self._thread.start()
        self._sem = self._call(self._make_semaphore())

    async def _make_semaphore(self) -> PrioritySlots:
        return PrioritySlots(self.concurrency)

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def name(self) -> str:
        return self.judge.name

    @property
    def deterministic(self) -> bool:
        """Does the judge give the same verdict twice? (the embedded judge: no second call)"""
        return bool(getattr(self.judge, "deterministic", False))

    def room(self) -> int:
        """Events the queue would take now."""
        with self._lock:
            return max(0, self.capacity - self._pending)

    def fill(self) -> float:
        """Share of the queue in use; turns waiting for the budget's refill (a flagged turn
        on credit) are not a backlog of the judge and do not count."""
        return max(0, self._pending - self._sleeping) / self.capacity

    def submit(
        self,
        event: Event,
        on_done: Callable[[JudgeResult], None],
        reason: str = "base",
        wait_s: float = 0.0,
        repeat: bool = False,
    ) -> bool:
        """Queue `event` (sampled for `reason`) for judging, no sooner than `wait_s` from
        now (a flagged turn taken on the budget's credit); False (nothing queued) when the
        queue is full. Waiting turns that are not base/stratum go before the others.
        `repeat`: judge it a second time, context shuffled (self-consistency)."""
        with self._lock:
            if self._pending >= self.capacity:
                return False
            self._pending += 1
        self._depth()
        work = self._bounded(event, reason, wait_s, repeat)
        fut = asyncio.run_coroutine_threadsafe(work, self._loop)
        fut.add_done_callback(lambda f: self._finished(event, f, on_done))
        return True

    def judge_now(self, event: Event, reason: str = "base", repeat: bool = False) -> JudgeResult:
        """Judge one event and wait (the offline `ragpulse score` path)."""
        result: JudgeResult = self._call(self.evaluate(event, reason, repeat))
        return result

    async def _bounded(
        self, event: Event, reason: str, wait_s: float = 0.0, repeat: bool = False
    ) -> JudgeResult:
        if wait_s > 0:
            with self._lock:
                self._sleeping += 1
            try:
                await asyncio.sleep(wait_s)
            finally:
                with self._lock:
                    self._sleeping -= 1
        async with self._sem.slot(first=reason not in POPULATION_REASONS):
            return await self.evaluate(event, reason, repeat)

    def _finished(
        self, event: Event, fut: Future[JudgeResult], on_done: Callable[[JudgeResult], None]
    ) -> None:
        with self._lock:
            self._pending -= 1
            self._idle.notify_all()
        self._depth()
        if fut.cancelled():  # unfinished at shutdown: counted by close()
            return
        try:
            result = fut.result()
        except Exception as exc:  # evaluate() turns metric failures into outcomes already
            log.error("judging failed: %s", type(exc).__name__, exc_info=exc)
            return
        on_done(result)

    def _depth(self) -> None:
        if self.prom is not None:
            self.prom.queue_depth.set(self._pending)

    async def evaluate(
        self, event: Event, reason: str = "base", repeat: bool = False
    ) -> JudgeResult:
        """Run every metric on `event`; export (population or boosted, by `reason`).
        `repeat` (not for a deterministic judge): a second, independent run with the
        context shuffled; its verdicts are compared, never counted as scores."""
        outcomes = await self._run(event)
        gates = dict(self.gates(outcomes)) if self.gates is not None else {}
        result = JudgeResult(event.event_id, event.service, outcomes, gates, reason)
        result.prompt_version = event.prompt_version
        result.compound = self.compound.score(result.scores())
        result.compound_inputs = tuple(m for m, w in self.compound.weights.items() if w > 0)
        if repeat and not self.deterministic and reason != CANARY:
            result.second_outcomes = await self._run(shuffled(event))
            result.consistency = compare(
                self._judged(outcomes), self._judged(result.second_outcomes), self.floor
            )
        self.exporter.export(event.event_id, result)
        return result

    def _judged(self, outcomes: list[MetricOutcome]) -> dict[str, float]:
        """{output: score} of the scores this judge gave (not a lexical metric's)."""
        return {o.metric: o.score for o in outcomes if o.score is not None and o.judge == self.name}

    async def _run(self, event: Event) -> list[MetricOutcome]:
        runs = await asyncio.gather(
            *(self._traced(m, event) for m in self.judge_metrics), return_exceptions=True
        )
        outcomes: list[MetricOutcome] = []
        for metric, run in zip(self.judge_metrics, runs, strict=True):
            if isinstance(run, BaseException):  # a metric bug: an error outcome, never a score
                log.error("metric %s raised %s", metric.name, type(run).__name__, exc_info=run)
                outcomes.extend(
                    MetricOutcome(name, "judge_error", judge=self.name, reason="internal_error")
                    for name in metric.outputs
                )
            else:
                outcomes.extend(run)
        return outcomes

    async def _traced(self, metric: JudgeMetric, event: Event) -> list[MetricOutcome]:
        """One span per judge metric call (GenAI semantic-convention attributes)."""
        attributes = {
            "gen_ai.evaluation.name": metric.name,
            "gen_ai.response.id": event.event_id,
            "ragpulse.judge": self.name,
        }
        with self.tracer.start_as_current_span(
            f"gen_ai.evaluation {metric.name}", attributes=attributes
        ) as span:
            outcomes = await metric(event, self.judge)
            errors = [o.reason or "judge_error" for o in outcomes if o.status == "judge_error"]
            if errors:
                span.set_attribute("error.type", errors[0])
                span.set_status(trace.Status(trace.StatusCode.ERROR, errors[0]))
            return outcomes

    def close(self, timeout_s: float) -> int:
        """Wait up to `timeout_s` for queued work; return how many events were left unjudged."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._pending and time.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - time.monotonic()))
            left = self._pending
        aclose = getattr(self.judge, "aclose", None)
        if callable(aclose):
            try:
                self._call(asyncio.wait_for(aclose(), 5))
            except Exception as exc:  # closing must not fail the shutdown
                log.warning("closing the judge failed: %s", type(exc).__name__)
        try:
            self._call(self._cancel_rest())
        except Exception as exc:
            log.warning("cancelling unfinished judge work failed: %s", type(exc).__name__)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()
        return left

    @staticmethod
    async def _cancel_rest() -> None:
        """Cancel the unfinished judge tasks and let them unwind (their offsets were
        committed by the detector path; the caller counts them as dropped)."""
        me = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not me]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)
