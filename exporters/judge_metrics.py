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

Reference turns (sampler reason ``reference``: golden/canary replays and reviewed turns
carrying ``labels.expected_answer``) are not traffic either. Their *reference-based*
scores (``answer_correctness``, ``answer_f1``, ``dece_f2`` ...; computed on reference turns
only) feed the standard families and drift streams: reference turns are the population
of those metrics. Their reference-free scores go to the boosted families with
``reason="reference"``, like any non-population turn's.

The compound score (``judge.compound.weights``) is exported as
``ragpulse_compound_score{window}`` on population turns, and on reference turns when it
weighs a reference-based score (weights that mix both kinds then track the reference
turns, the only turns where every weighted score exists).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from exporters.otel import OtelEvents
from exporters.prometheus import PromFamilies
from monitors.judges.base import JudgeCall
from monitors.judges.consistency import Pair
from monitors.metrics.base import MetricOutcome

__all__ = [
    "CANARY",
    "POPULATION_REASONS",
    "JudgeExporter",
    "JudgeResult",
    "RollingMeans",
    "is_population",
]

#: sampling reasons whose turns are an unbiased sample of the traffic
POPULATION_REASONS = frozenset({"base", "stratum"})
#: the reason of a canary turn (judge health): accounting and liveness only, no aggregates
CANARY = "canary"


def is_population(reason: str) -> bool:
    return reason in POPULATION_REASONS


@dataclass
class JudgeResult:
    event_id: str
    service: str | None = None
    outcomes: list[MetricOutcome] = field(default_factory=list)
    gates: dict[str, bool | None] = field(default_factory=dict)
    sample_reason: str = "base"
    compound: float | None = None  # judge.compound.weights over this turn's scores
    compound_inputs: tuple[str, ...] = ()  # the scores it weighs
    prompt_version: str | None = None  # the turn's, for the SLO counters
    # self-consistency: the second call's outcomes (context shuffled) and, per metric scored
    # on both calls, the pair of verdicts; the first call's verdicts are the ones that count
    second_outcomes: list[MetricOutcome] = field(default_factory=list)
    consistency: dict[str, Pair] = field(default_factory=dict)

    @property
    def population(self) -> bool:
        """Sampled at the base/stratum rate: may feed means, pass ratios and drift."""
        return is_population(self.sample_reason)

    def scores(self) -> dict[str, float]:
        """{output: score} of the scored outcomes."""
        return {o.metric: o.score for o in self.outcomes if o.score is not None}

    def calls(self) -> list[JudgeCall]:
        """Every judge call this turn made (a call may produce several outcomes)."""
        calls = {id(o.call): o.call for o in self.outcomes + self.second_outcomes if o.call}
        return list(calls.values())

    def aggregated(self, outcome: MetricOutcome) -> bool:
        """Does this scored outcome feed the aggregates (histogram, means, drift)? Every
        score of a population turn; of any other turn, the reference-based ones only."""
        return outcome.score is not None and (self.population or outcome.reference_based)

    def aggregate_scores(self) -> dict[str, float]:
        """{output: score} that feed the aggregates; with "compound" when it does too."""
        out = {
            o.metric: o.score for o in self.outcomes if o.score is not None and self.aggregated(o)
        }
        # the compound follows its inputs: on a population turn it is a population score;
        # on a reference turn, it is one when it weighs a reference-based score
        reference_weighted = any(
            o.reference_based and o.metric in self.compound_inputs for o in self.outcomes
        )
        if self.compound is not None and (self.population or reference_weighted):
            out["compound"] = self.compound
        return out

    def scorecard_update(self) -> dict[str, Any]:
        """The `rag.scores` record that completes the event's scorecard."""
        return {
            "event_id": self.event_id,
            "update": "judge",
            "metrics": {o.metric: o.to_dict() for o in self.outcomes},
            "gates": self.gates,
            "sampled": True,
            "sample_reason": self.sample_reason,
            **({"compound": round(self.compound, 4)} if self.compound is not None else {}),
            **(
                {"consistency": {m: p.to_dict() for m, p in self.consistency.items()}}
                if self.consistency
                else {}
            ),
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
        prom: PromFamilies | None,
        events: OtelEvents,
        windows_s: Mapping[str, float],
        clock: Callable[[], float],
    ) -> None:
        self.judge_name = judge_name
        self.prom = prom
        self.otel = events
        self.rolling = RollingMeans(windows_s, clock)

    def export(self, event_id: str, result: JudgeResult) -> None:
        if result.sample_reason != CANARY:  # a canary is not a turn of the service
            for o in result.outcomes:
                self.otel.evaluation(o, event_id)
        m = self.prom
        if m is None:
            return
        if any(o.status != "skipped" for o in result.outcomes):
            m.judge_health.verdict(self.judge_name)  # liveness: a verdict, ok or error
        if result.sample_reason == CANARY:  # not traffic: the canary runner exports it
            self._health_calls(m, "canary", self._accounting(m, result.outcomes))
            return
        self._accounting(m, result.outcomes)
        if result.second_outcomes:
            self._health_calls(m, "consistency", self._accounting(m, result.second_outcomes))
        for metric, pair in result.consistency.items():
            m.judge_health.consistency_pairs.labels(
                self.judge_name, metric, "flip" if pair.flip else "agree"
            ).inc()
            m.judge_health.consistency_diff.labels(self.judge_name, metric).observe(pair.abs_diff)
        self._aggregates(m, result)
        self._slos(m, result)
        if not result.population:
            self._boosted(m, result)

    def declare_compound(self, weights: Mapping[str, float]) -> None:
        """Export the configured compound weights (ragpulse_compound_weight{metric})."""
        if self.prom is not None:
            for metric, weight in weights.items():
                self.prom.compound_weight.labels(metric).set(weight)

    def _health_calls(self, m: PromFamilies, kind: str, calls: list[JudgeCall]) -> None:
        usd = sum(c.cost_usd for c in calls)
        m.judge_health.health_calls(self.judge_name, kind, len(calls), usd)

    def _accounting(self, m: PromFamilies, outcomes: list[MetricOutcome]) -> list[JudgeCall]:
        """Count every outcome and call; the calls."""
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
        return list(calls.values())

    def _aggregates(self, m: PromFamilies, result: JudgeResult) -> None:
        scores = result.aggregate_scores()
        compound = scores.pop("compound", None)
        for metric, score in scores.items():
            m.metric_score.labels(metric).observe(score)
            for window, mean in self.rolling.add(f"metric:{metric}", score).items():
                m.metric_mean.labels(metric, window).set(mean)
        if compound is not None:
            for window, mean in self.rolling.add("compound", compound).items():
                m.compound_score.labels(window).set(mean)
        if not result.population:
            return
        for gate, passed in result.gates.items():
            if passed is not None:
                m.gate_results.labels(gate, "pass" if passed else "fail").inc()
                ratio = self.rolling.add(f"gate:{gate}", 1.0 if passed else 0.0)
                for window, value in ratio.items():
                    m.gate_pass_ratio.labels(gate, window).set(value)

    @staticmethod
    def _slos(m: PromFamilies, result: JudgeResult) -> None:
        """judge_pass (population turns) and reference_correct (reference turns) SLOs."""
        reference = result.sample_reason == "reference"
        m.slo.judged(
            result.service,
            lambda: (m.cap_service(result.service), m.cap_prompt(result.prompt_version)),
            result.population,
            reference,
            result.gates,
            {
                o.metric: o.score
                for o in result.outcomes
                if o.score is not None and o.reference_based
            }
            if reference
            else {},
        )

    @staticmethod
    def _boosted(m: PromFamilies, result: JudgeResult) -> None:
        reason = result.sample_reason
        for o in result.outcomes:
            if o.status == "scored" and o.score is not None and not result.aggregated(o):
                m.boosted_metric_score.labels(o.metric, reason).observe(o.score)
        for gate, passed in result.gates.items():
            if passed is not None:
                m.boosted_gate_results.labels(gate, reason, "pass" if passed else "fail").inc()
