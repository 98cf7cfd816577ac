"""Prometheus metric families (DESIGN.md "Prometheus names"), one registry per process.

Series that are known in advance (outcomes, detector categories) are created at
start with value 0, so rates and alerts work from the first scrape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
)

from exporters.fleet_metrics import FleetMetrics
from exporters.judge_health import JudgeHealthMetrics
from exporters.labels import LabelCap
from exporters.slo_metrics import SloCounters
from exporters.slo_settings import SloSpec
from stream.contract.scales import BAND_EDGES, GATES

__all__ = [
    "EVENT_OUTCOMES",
    "GATE_TIERS",
    "OUTPUT_RECORDS",
    "SCORECARD_PARTS",
    "PromFamilies",
    "ragpulse_version",
]

#: the gate tiers (`monitors.metrics.gates.GATES`; not imported: exporters load first)
GATE_TIERS = GATES

# `*_created` series double the exposition size and no dashboard reads them
disable_created_metrics()

#: consumed = every message read; it ends as exactly one of scored / invalid / duplicate.
EVENT_OUTCOMES = ("consumed", "scored", "invalid", "duplicate", "dead_lettered")

#: what a record over kafka.max_record_bytes sheds, in this order (judge updates: justification)
SCORECARD_PARTS = ("extra", "evidence", "detections", "justification")
#: the kinds of record ragpulse publishes (label values of the refused-output counter)
OUTPUT_RECORDS = ("scorecard", "judge_update", "dead_letter", "alarm", "observation", "state")

_DETECT_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5)


def ragpulse_version() -> str:
    try:
        return version("ragpulse")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


class PromFamilies:
    """All ragpulse metric families on one CollectorRegistry."""

    @classmethod
    def with_label_caps(cls, max_values: int, allow: Mapping[str, Sequence[str]]) -> PromFamilies:
        """Families whose service/model/prompt_version labels are bounded as configured."""
        caps = {
            name: LabelCap(max_values, allow.get(name))
            for name in ("service", "model", "prompt_version")
        }
        return cls(label_caps=caps)

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        label_caps: Mapping[str, LabelCap] | None = None,
        version: str | None = None,
    ) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        caps = dict(label_caps or {})
        self.cap_service = caps.get("service") or LabelCap()
        self.cap_model = caps.get("model") or LabelCap()
        self.cap_prompt = caps.get("prompt_version") or LabelCap()

        Info("ragpulse_build", "ragpulse build information", registry=r).info(
            {"version": version or ragpulse_version()}
        )
        self.events = Counter(
            "ragpulse_events", "Messages read from the input topic, by outcome", ["outcome"],
            registry=r,
        )  # fmt: skip
        for outcome in EVENT_OUTCOMES:
            self.events.labels(outcome)
        self.invalid = Counter(
            "ragpulse_invalid_events", "Messages that failed parsing/validation, by reason",
            ["reason"], registry=r,
        )  # fmt: skip
        self.detector_hits = Counter(
            "ragpulse_detector_hits", "Rule detector findings", ["detector", "category"], registry=r
        )
        self.detector_errors = Counter(
            "ragpulse_detector_errors",
            "Detector calls that raised (the event is still scored by the others)",
            ["detector"],
            registry=r,
        )
        self.failure_modes = Counter(
            "ragpulse_failure_modes",
            "Scored events showing a failure mode",
            ["failure_mode", "service", "prompt_version"],
            registry=r,
        )
        self.scored = Counter(
            "ragpulse_scored_events",
            "Scored events by deployment (denominator for failure-mode rates)",
            ["service", "model", "prompt_version"],
            registry=r,
        )
        self.detect_seconds = Histogram(
            "ragpulse_detect_seconds", "Time to run all detectors on one event",
            buckets=_DETECT_BUCKETS, registry=r,
        )  # fmt: skip
        self.last_event = Gauge(
            "ragpulse_last_event_timestamp_seconds", "Unix time the last message was read",
            registry=r,
        )  # fmt: skip
        self.consumer_lag = Gauge(
            "ragpulse_consumer_lag",
            "Log-end offset minus the group's committed offset (as kafka-consumer-groups shows)",
            ["partition"],
            registry=r,
        )
        self.consumer_stalled = Gauge(
            "ragpulse_consumer_stalled",
            "1 while the partition has lag and its committed offset has not moved (Burrow's stall)",
            ["partition"],
            registry=r,
        )
        self.consumer_committed = Gauge(
            "ragpulse_consumer_committed_offset", "The group's committed offset", ["partition"],
            registry=r,
        )  # fmt: skip
        self.consumer_end = Gauge(
            "ragpulse_consumer_end_offset", "Log-end offset (high watermark) the broker reports",
            ["partition"], registry=r,
        )  # fmt: skip
        self.drift_alarm = Gauge(
            "ragpulse_drift_alarm",
            "1 while a drift alarm is up for the stream",
            ["metric", "detector", "service"],
            registry=r,
        )
        self.drift_alarms = Counter(
            "ragpulse_drift_alarms",
            "Drift alarms raised",
            ["metric", "detector", "service"],
            registry=r,
        )
        # judge metrics on sampled turns
        self.metric_score = Histogram(
            "ragpulse_metric_score",
            "Judge scores in [0, 1]; bucket edges are the severity bands",
            ["metric"],
            buckets=(*BAND_EDGES, 1.0),
            registry=r,
        )
        self.metric_mean = Gauge(
            "ragpulse_metric_mean", "Rolling mean judge score", ["metric", "window"], registry=r
        )
        # which judge and which scale stand behind a metric's scores: a calibrated embedded
        # probability is never read as an LLM judge's verdict share without saying so
        self.metric_scale = Gauge(
            "ragpulse_metric_scale_info",
            "1 for each (metric, judge, scale) that produced scores; scale is 'calibrated'"
            " (a probability that the turn is fine) or 'judge' (the judge's own scale)",
            ["metric", "judge", "scale"],
            registry=r,
        )
        # the fitted compound of several judge scores (judge.compound.weights)
        self.compound_score = Gauge(
            "ragpulse_compound_score",
            "Rolling mean of the compound score (weighted mean of judge scores,"
            " judge.compound.weights): base/stratum-sampled turns, and reference turns when"
            " a weighted score is reference-based",
            ["window"],
            registry=r,
        )
        self.compound_weight = Gauge(
            "ragpulse_compound_weight",
            "Configured weight of a judge metric in the compound score",
            ["metric"],
            registry=r,
        )
        self.gate_pass_ratio = Gauge(
            "ragpulse_gate_pass_ratio",
            "Share of judged events passing the gate (base/stratum-sampled turns only)",
            ["gate", "window"],
            registry=r,
        )
        self.gate_results = Counter(
            "ragpulse_gate_results",
            "Gate results of judged events (base/stratum-sampled turns only)",
            ["gate", "result"],
            registry=r,
        )
        for gate in GATE_TIERS:  # both results exist from the start: increase() sees every one
            for result in ("pass", "fail"):
                self.gate_results.labels(gate, result)
        # boosted turns (judged because they look bad): kept out of the population aggregates
        self.boosted_metric_score = Histogram(
            "ragpulse_boosted_metric_score",
            "Judge scores of boosted turns (reason = the boost); not a traffic estimate",
            ["metric", "reason"],
            buckets=(*BAND_EDGES, 1.0),
            registry=r,
        )
        self.boosted_gate_results = Counter(
            "ragpulse_boosted_gate_results",
            "Gate results of boosted turns",
            ["gate", "reason", "result"],
            registry=r,
        )
        self.judge_requests = Counter(
            "ragpulse_judge_requests",
            "Judge metric evaluations by outcome (ok, judge_error, skipped)",
            ["judge", "outcome"],
            registry=r,
        )
        self.judge_errors = Counter(
            "ragpulse_judge_errors", "Judge failures by reason", ["judge", "reason"], registry=r
        )
        self.judge_latency = Histogram(
            "ragpulse_judge_latency_seconds",
            "Latency of one judge call (all attempts)",
            ["judge"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r,
        )
        self.judge_tokens = Counter(
            "ragpulse_judge_tokens", "Judge tokens", ["direction"], registry=r
        )
        self.judge_cost = Counter("ragpulse_judge_cost_usd", "Judge spend in USD", registry=r)
        self.sampled = Counter(
            "ragpulse_sampled", "Sampling decisions that sent an event to the judge", ["reason"],
            registry=r,
        )  # fmt: skip
        self.sample_rate = Gauge(
            "ragpulse_sample_rate", "Current effective base sample rate", registry=r
        )
        self.queue_depth = Gauge(
            "ragpulse_pipeline_queue_depth", "Sampled events waiting for or in judging", registry=r
        )
        self.dropped = Counter(
            "ragpulse_dropped", "Sampled events not judged, by reason", ["reason"], registry=r
        )
        self.dropped_flagged = Counter(
            "ragpulse_dropped_flagged",
            "Flagged turns (with a failure mode) not judged, by failure mode and reason",
            ["failure_mode", "reason"],
            registry=r,
        )
        for direction in ("prompt", "completion"):
            self.judge_tokens.labels(direction)
        self.fleet = FleetMetrics(r)
        self.judge_health = JudgeHealthMetrics(r)
        self.slo_events = Counter(
            "ragpulse_slo_events",
            "Events of each quality SLO by outcome (good / bad), docs/slo.md",
            ["slo", "service", "prompt_version", "outcome"],
            registry=r,
        )
        self.slo = SloCounters(self.slo_events)
        self.scorecards_truncated = Counter(
            "ragpulse_scorecards_truncated",
            "Records on the scores topic that shed a part to fit kafka.max_record_bytes, by part",
            ["part"], registry=r,
        )  # fmt: skip
        for part in SCORECARD_PARTS:
            self.scorecards_truncated.labels(part)
        self.output_refused = Counter(
            "ragpulse_output_records_refused",
            "Records ragpulse could not publish as they were: reason too_large (over"
            " kafka.max_record_bytes after shedding) or rejected (refused by the broker);"
            " outcome dead_lettered or dropped",
            ["record", "reason", "outcome"], registry=r,
        )  # fmt: skip
        self.ready = Gauge(
            "ragpulse_ready", "1 when the consumer is assigned and the broker reachable", registry=r
        )

    def declare_slos(self, specs: Sequence[SloSpec]) -> None:
        """Count these SLOs from now on (the settings' `slos`)."""
        self.slo = SloCounters(self.slo_events, specs)

    def declare_detector(self, detector: str, categories: Iterable[str]) -> None:
        self.detector_errors.labels(detector)
        for category in categories:
            self.detector_hits.labels(detector, category)
