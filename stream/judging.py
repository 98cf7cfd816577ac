"""Judging sampled events off the detector path, with bounded memory.

`JudgeService` runs the judge metrics on its own thread and event loop, so neither a
slow LLM endpoint nor the CPU-bound embedded judge can delay the detector path or the
offset commits. `submit` never blocks: when `queue_size` events are already waiting or
in flight it refuses (the caller counts `ragpulse_dropped_total{reason="judge_backlog"}`
and the sampler lowers its rate from `fill()`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace

from exporters.otel import OtelEvents
from exporters.prometheus import Metrics
from monitors.judges.base import EmbeddedJudge, JudgeCall, LLMJudge
from monitors.metrics.base import JudgeMetric, MetricOutcome
from stream.events import Event
from stream.settings import ConfigError, Settings

__all__ = ["JudgeResult", "JudgeService", "RollingMeans", "build_judging"]

log = logging.getLogger(__name__)

GateEvaluator = Callable[[Sequence[MetricOutcome]], Mapping[str, bool | None]]


@dataclass
class JudgeResult:
    event_id: str
    service: str | None = None
    outcomes: list[MetricOutcome] = field(default_factory=list)
    gates: dict[str, bool | None] = field(default_factory=dict)

    def scorecard_update(self) -> dict[str, Any]:
        """The `rag.scores` record that completes the event's scorecard."""
        return {
            "event_id": self.event_id,
            "update": "judge",
            "metrics": {o.metric: o.to_dict() for o in self.outcomes},
            "gates": self.gates,
            "sampled": True,
        }


class RollingMeans:
    """Means over several trailing time windows, per key (thread-safe)."""

    def __init__(self, windows_s: Mapping[str, float], clock: Callable[[], float]) -> None:
        self.windows = dict(windows_s)
        self._horizon = max(self.windows.values(), default=0.0)
        self._clock = clock
        self._data: dict[str, deque[tuple[float, float]]] = {}
        self._lock = threading.Lock()

    def add(self, key: str, value: float) -> dict[str, float]:
        now = self._clock()
        with self._lock:
            q = self._data.setdefault(key, deque())
            q.append((now, value))
            while q and q[0][0] < now - self._horizon:
                q.popleft()
            out = {}
            for name, span in self.windows.items():
                values = [v for t, v in q if t >= now - span]
                out[name] = sum(values) / len(values)
            return out


class JudgeService:
    def __init__(
        self,
        judge: LLMJudge | EmbeddedJudge,
        metrics: Sequence[JudgeMetric],
        queue_size: int,
        concurrency: int,
        prom: Metrics | None = None,
        events: OtelEvents | None = None,
        gates: GateEvaluator | None = None,
        windows_s: Mapping[str, float] | None = None,
        clock: Callable[[], float] = time.time,
        tracer: trace.Tracer | None = None,
    ) -> None:
        self.judge = judge
        self.tracer = tracer or trace.get_tracer("ragpulse")
        self.metrics = list(metrics)
        self.capacity = queue_size
        self.concurrency = concurrency
        self.prom = prom
        self.events = events or OtelEvents()
        self.gates = gates
        self.rolling = RollingMeans(windows_s or {"5m": 300.0, "1h": 3600.0}, clock)
        self._pending = 0
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ragpulse-judge")
        self._thread.daemon = True
        self._thread.start()
        self._sem = self._call(self._make_semaphore())

    async def _make_semaphore(self) -> asyncio.Semaphore:
        return asyncio.Semaphore(self.concurrency)

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def name(self) -> str:
        return self.judge.name

    def fill(self) -> float:
        return self._pending / self.capacity

    def submit(self, event: Event, on_done: Callable[[JudgeResult], None]) -> bool:
        """Queue `event` for judging; False (nothing queued) when the queue is full."""
        with self._lock:
            if self._pending >= self.capacity:
                return False
            self._pending += 1
        self._depth()
        fut = asyncio.run_coroutine_threadsafe(self._bounded(event), self._loop)
        fut.add_done_callback(lambda f: self._finished(event, f, on_done))
        return True

    def judge_now(self, event: Event) -> JudgeResult:
        """Judge one event and wait (the offline `ragpulse score` path)."""
        result: JudgeResult = self._call(self.evaluate(event))
        return result

    async def _bounded(self, event: Event) -> JudgeResult:
        async with self._sem:
            return await self.evaluate(event)

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

    async def evaluate(self, event: Event) -> JudgeResult:
        runs = await asyncio.gather(
            *(self._traced(m, event) for m in self.metrics), return_exceptions=True
        )
        outcomes: list[MetricOutcome] = []
        for metric, run in zip(self.metrics, runs, strict=True):
            if isinstance(run, BaseException):  # a metric bug: an error outcome, never a score
                log.error("metric %s raised %s", metric.name, type(run).__name__, exc_info=run)
                outcomes.extend(
                    MetricOutcome(name, "judge_error", judge=self.name, reason="internal_error")
                    for name in metric.outputs
                )
            else:
                outcomes.extend(run)
        gates = dict(self.gates(outcomes)) if self.gates is not None else {}
        self._export(event, outcomes, gates)
        return JudgeResult(event.event_id, event.service, outcomes, gates)

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

    def _export(
        self, event: Event, outcomes: list[MetricOutcome], gates: dict[str, bool | None]
    ) -> None:
        for o in outcomes:
            self.events.evaluation(o, event.event_id)
        m = self.prom
        if m is None:
            return
        calls: dict[int, JudgeCall] = {}
        for o in outcomes:
            judge = o.judge or self.name
            if o.status == "scored" and o.score is not None:
                m.judge_requests.labels(judge, "ok").inc()
                m.metric_score.labels(o.metric).observe(o.score)
                for window, mean in self.rolling.add(f"metric:{o.metric}", o.score).items():
                    m.metric_mean.labels(o.metric, window).set(mean)
            elif o.status == "judge_error":
                m.judge_requests.labels(judge, "judge_error").inc()
                m.judge_errors.labels(judge, o.reason or "internal_error").inc()
            else:
                m.judge_requests.labels(judge, "skipped").inc()
            if o.call is not None:
                calls[id(o.call)] = o.call
        for call in calls.values():  # one LLM call may produce several scores
            m.judge_latency.labels(call.judge).observe(call.latency_s)
            m.judge_tokens.labels("prompt").inc(call.prompt_tokens)
            m.judge_tokens.labels("completion").inc(call.completion_tokens)
            m.judge_cost.inc(call.cost_usd)
        for gate, passed in gates.items():
            if passed is not None:
                ratio = self.rolling.add(f"gate:{gate}", 1.0 if passed else 0.0)
                for window, value in ratio.items():
                    m.gate_pass_ratio.labels(gate, window).set(value)

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


def build_judging(
    settings: Settings, prom: Metrics | None = None, events: OtelEvents | None = None
) -> JudgeService | None:
    """The configured judge, metrics and gates behind a JudgeService (None: judge.type none).

    Raises ConfigError naming the setting when the judge or a metric cannot be built.
    """
    js = settings.judge
    if js.type == "none":
        return None
    import monitors.judges
    import monitors.metrics  # noqa: F401  (registers the built-in metrics)
    from monitors.judges.base import create_judge
    from monitors.metrics.base import create_metric
    from monitors.metrics.gates import evaluate_gates

    options = dict(js.options)
    if js.api_key is not None:
        options["api_key"] = js.api_key
    try:
        judge = create_judge(js.type, **options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"judge.type / judge.options: {exc}") from None
    unknown = sorted(set(js.metric_options) - set(js.metrics))
    if unknown:
        raise ConfigError(f"judge.metric_options names metrics that are not enabled: {unknown}")
    built = []
    for name in js.metrics:
        try:
            built.append(create_metric(name, **js.metric_options.get(name, {})))
        except ValueError as exc:
            raise ConfigError(f"judge.metrics / judge.metric_options.{name}: {exc}") from None
    gates = settings.gates

    def evaluate(outcomes: Sequence[MetricOutcome]) -> Mapping[str, bool | None]:
        return evaluate_gates(outcomes, gates)

    return JudgeService(
        judge, built, js.queue_size, js.concurrency, prom, events, evaluate, js.windows_s
    )
