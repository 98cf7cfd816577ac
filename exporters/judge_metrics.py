"""What one judged event exports: Prometheus families, OTel evaluation events.

Population aggregates — ``ragpulse_metric_score{metric}``, ``ragpulse_metric_mean{metric,
window}``, ``ragpulse_gate_pass_ratio{gate,window}``, ``ragpulse_gate_results_total{gate,
result}`` and the judge-score drift streams —
use only turns sampled at the base or stratum rate (:data:`POPULATION_REASONS`): those
are an unbiased sample of the traffic. Boosted turns (a detector hit, negative feedback,
weak retrieval) are judged because they look bad, so they go to their own families,
``ragpulse_boosted_metric_score{metric,reason}`` and
``ragpulse_boosted_gate_results_total{gate,reason,result}``; they still get scorecards and
OTel events. Judge accounting (requests, errors, latency, tokens, cost) counts every call.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from exporters.otel import OtelEvents
from exporters.prometheus import Metrics
from monitors.judges.base import JudgeCall
from monitors.metrics.base import MetricOutcome

__all__ = ["POPULATION_REASONS", "JudgeExporter", "JudgeResult", "RollingMeans", "is_population"]

#: sampling reasons whose turns are an unbiased sample of the traffic
POPULATION_REASONS = frozenset({"base", "stratum"})


def is_population(reason: str) -> bool:
    return reason in POPULATION_REASONS


@dataclass
class JudgeResult:
    event_id: str
    service: str | None = None
    outcomes: list[MetricOutcome] = field(default_factory=list)
    gates: dict[str, bool | None] = field(default_factory=dict)
    sample_reason: str = "base"

    @property
    def population(self) -> bool:
        """Sampled at the base/stratum rate: may feed means, pass ratios and drift."""
        return is_population(self.sample_reason)

    def scorecard_update(self) -> dict[str, Any]:
        """The `rag.scores` record that completes the event's scorecard."""
        return {
            "event_id": self.event_id,
            "update": "judge",
            "metrics": {o.metric: o.to_dict() for o in self.outcomes},
            "gates": self.gates,
            "sampled": True,
            "sample_reason": self.sample_reason,
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


class JudgeExporter:
    """Exports one judged event (see the module docstring for what goes where)."""

    def __init__(
        self,
        judge_name: str,
        prom: Metrics | None,
        events: OtelEvents,
        windows_s: Mapping[str, float],
        clock: Callable[[], float],
    ) -> None:
        self.judge_name = judge_name
        self.prom = prom
        self.otel = events
        self.rolling = RollingMeans(windows_s, clock)

    def export(self, event_id: str, result: JudgeResult) -> None:
        for o in result.outcomes:
            self.otel.evaluation(o, event_id)
        m = self.prom
        if m is None:
            return
        self._accounting(m, result.outcomes)
        if result.population:
            self._population(m, result)
        else:
            self._boosted(m, result)

    def _accounting(self, m: Metrics, outcomes: list[MetricOutcome]) -> None:
        calls: dict[int, JudgeCall] = {}
        for o in outcomes:
            judge = o.judge or self.judge_name
            if o.status == "scored" and o.score is not None:
                m.judge_requests.labels(judge, "ok").inc()
                scale = "calibrated" if o.calibrated else "judge"
                m.metric_scale.labels(o.metric, judge, scale).set(1)
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

    def _population(self, m: Metrics, result: JudgeResult) -> None:
        for o in result.outcomes:
            if o.status == "scored" and o.score is not None:
                m.metric_score.labels(o.metric).observe(o.score)
                for window, mean in self.rolling.add(f"metric:{o.metric}", o.score).items():
                    m.metric_mean.labels(o.metric, window).set(mean)
        for gate, passed in result.gates.items():
            if passed is not None:
                m.gate_results.labels(gate, "pass" if passed else "fail").inc()
                ratio = self.rolling.add(f"gate:{gate}", 1.0 if passed else 0.0)
                for window, value in ratio.items():
                    m.gate_pass_ratio.labels(gate, window).set(value)

    @staticmethod
    def _boosted(m: Metrics, result: JudgeResult) -> None:
        reason = result.sample_reason
        for o in result.outcomes:
            if o.status == "scored" and o.score is not None:
                m.boosted_metric_score.labels(o.metric, reason).observe(o.score)
        for gate, passed in result.gates.items():
            if passed is not None:
                m.boosted_gate_results.labels(gate, reason, "pass" if passed else "fail").inc()
