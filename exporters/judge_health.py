"""The judge's own health, as Prometheus families (docs/judges.md "Judge health").

Three signals, each independent of the service's traffic:

- **canaries**: a fixed set of turns with known verdicts, re-judged every round.
  ``ragpulse_judge_canary_score{judge,metric,canary_set}`` (the round's mean score),
  ``ragpulse_judge_canary_agreement{...}`` (share of the round's verdicts on the expected
  side of the gate floor), ``ragpulse_judge_canary_verdicts_total{...,result}``,
  ``ragpulse_judge_canary_rounds_total{judge,canary_set,outcome}`` and
  ``ragpulse_judge_drift_alarm{judge,metric,canary_set}`` (1 while the canary drift
  detectors say the judge changed: alert ``RagpulseJudgeDrift``);
- **self-consistency**: ``ragpulse_judge_consistency_pairs_total{judge,metric,result}``
  (agree / flip across the gate floor) and the histogram
  ``ragpulse_judge_consistency_abs_diff{judge,metric}`` (its sum / count is the mean
  absolute difference);
- **liveness**: ``ragpulse_judge_last_verdict_timestamp_seconds{judge}`` (a verdict, ok or
  error; the process start until the first one) and its age at scrape time,
  ``ragpulse_judge_last_verdict_age_seconds{judge}`` (alert ``RagpulseJudgeSilent``).

The calls canaries and second opinions make are in the judge's accounting families like
every call, and also in ``ragpulse_judge_health_calls_total{judge,kind}`` and
``ragpulse_judge_health_cost_usd_total{judge,kind}`` (kind ``canary`` / ``consistency``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["HEALTH_KINDS", "JudgeHealthMetrics"]

HEALTH_KINDS = ("canary", "consistency")
CANARY_RESULTS = ("agree", "disagree", "judge_error")
CANARY_ROUNDS = ("judged", "judge_backlog", "timeout")
_DIFF_BUCKETS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)


class JudgeHealthMetrics:
    def __init__(self, r: CollectorRegistry, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.canary_score = Gauge(
            "ragpulse_judge_canary_score",
            "Mean score of the last canary round, per metric",
            ["judge", "metric", "canary_set"], registry=r,
        )  # fmt: skip
        self.canary_agreement = Gauge(
            "ragpulse_judge_canary_agreement",
            "Share of the last canary round's verdicts on the expected side of the gate floor",
            ["judge", "metric", "canary_set"], registry=r,
        )  # fmt: skip
        self.canary_verdicts = Counter(
            "ragpulse_judge_canary_verdicts",
            "Canary verdicts by result (agree / disagree with the expected verdict, judge_error)",
            ["judge", "metric", "canary_set", "result"], registry=r,
        )  # fmt: skip
        self.canary_rounds = Counter(
            "ragpulse_judge_canary_rounds",
            "Canary rounds by outcome (judged; skipped: judge_backlog, timeout)",
            ["judge", "canary_set", "outcome"], registry=r,
        )  # fmt: skip
        self.drift_alarm = Gauge(
            "ragpulse_judge_drift_alarm",
            "1 while the canary drift detectors say the judge's verdicts changed",
            ["judge", "metric", "canary_set"], registry=r,
        )  # fmt: skip
        self.consistency_pairs = Counter(
            "ragpulse_judge_consistency_pairs",
            "Turns judged twice (context shuffled), by result: agree, or flip across the"
            " gate floor",
            ["judge", "metric", "result"], registry=r,
        )  # fmt: skip
        self.consistency_diff = Histogram(
            "ragpulse_judge_consistency_abs_diff",
            "Absolute difference between the two verdicts of a turn judged twice",
            ["judge", "metric"], buckets=_DIFF_BUCKETS, registry=r,
        )  # fmt: skip
        self.last_verdict = Gauge(
            "ragpulse_judge_last_verdict_timestamp_seconds",
            "Unix time of the judge's last verdict, ok or error (process start before one)",
            ["judge"], registry=r,
        )  # fmt: skip
        self.last_verdict_age = Gauge(
            "ragpulse_judge_last_verdict_age_seconds",
            "Seconds since the judge's last verdict, ok or error (since start before one)",
            ["judge"], registry=r,
        )  # fmt: skip
        self.calls = Counter(
            "ragpulse_judge_health_calls",
            "Judge calls made for judge health, by kind (canary, consistency)",
            ["judge", "kind"], registry=r,
        )  # fmt: skip
        self.cost = Counter(
            "ragpulse_judge_health_cost_usd",
            "Judge spend for judge health in USD, by kind (canary, consistency)",
            ["judge", "kind"], registry=r,
        )  # fmt: skip
        self._last: dict[str, float] = {}

    def declare_judge(self, judge: str) -> None:
        """The judge's liveness series from start (its age counts from now)."""
        if judge in self._last:
            return
        self._last[judge] = self._clock()
        self.last_verdict.labels(judge).set(self._last[judge])
        self.last_verdict_age.labels(judge).set_function(
            lambda: max(0.0, self._clock() - self._last[judge])
        )
        for kind in HEALTH_KINDS:
            self.calls.labels(judge, kind)
            self.cost.labels(judge, kind)

    def declare_canaries(self, judge: str, canary_set: str, metrics: Iterable[str]) -> None:
        for outcome in CANARY_ROUNDS:
            self.canary_rounds.labels(judge, canary_set, outcome)
        for metric in metrics:
            self.drift_alarm.labels(judge, metric, canary_set).set(0)
            for result in CANARY_RESULTS:
                self.canary_verdicts.labels(judge, metric, canary_set, result)

    def verdict(self, judge: str) -> None:
        """A verdict (ok or error) from `judge` now."""
        self.declare_judge(judge)
        now = self._last[judge] = self._clock()
        self.last_verdict.labels(judge).set(now)

    def health_calls(self, judge: str, kind: str, calls: int, usd: float) -> None:
        self.calls.labels(judge, kind).inc(calls)
        self.cost.labels(judge, kind).inc(usd)
