"""The PromQL of ragpulse: helpers shared with the dashboard, and `RuleBuilder`, which
writes the recording and alerting rules for an `AlertSettings`.

Only names from docs/metrics.md and DESIGN.md "Prometheus names" appear here. The tests
check and unit-test every rule with `promtool`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from exporters.durations import duration_seconds
from stream.contract.scales import BAND_EDGES
from stream.contract.scales import SEVERITY_BANDS as SCORE_BANDS

if TYPE_CHECKING:
    from exporters.alert_settings import AlertBase, AlertSettings

__all__ = [
    "JUDGE_ATTEMPTS",
    "SEVERITY_BANDS",
    "RuleBuilder",
    "by",
    "duration_seconds",
    "percent",
    "regex_alternation",
]

#: judge outcomes that mean "the judge was called": the denominator of the error ratio
JUDGE_ATTEMPTS = 'outcome=~"ok|judge_error"'

#: severity bands of judge scores (DESIGN.md) as (name, lower `le`, upper `le`) of the
#: `ragpulse_metric_score` histogram, whose buckets sit on the band edges
SEVERITY_BANDS: tuple[tuple[str, str | None, str], ...] = tuple(
    (band, None if i == 0 else f"{BAND_EDGES[i - 1]:g}", f"{upper:g}" if upper < 1 else "+Inf")
    for i, (upper, band) in enumerate(SCORE_BANDS)
)


def by(*labels: str | Iterable[str]) -> str:
    """`by (a, b, c)` from names and lists of names, in order, without duplicates."""
    names: list[str] = []
    for item in labels:
        for name in [item] if isinstance(item, str) else item:
            if name not in names:
                names.append(name)
    return f"by ({', '.join(names)})"


def regex_alternation(values: Iterable[str]) -> str:
    """`a|b|c` (sorted) for a `=~` / `!~` matcher; the values are label-name-safe."""
    return "|".join(sorted(set(values)))


def percent(ratio: float) -> str:
    """0.05 -> '5%', 0.005 -> '0.5%' (for annotation text)."""
    return f"{ratio * 100:g}%"


Rule = dict[str, Any]


def _record(name: str, expr: str) -> Rule:
    return {"record": name, "expr": expr}


class RuleBuilder:
    """The recording and alerting rules for one `AlertSettings`."""

    def __init__(self, alerts: AlertSettings) -> None:
        self.a = alerts
        self.agg = list(alerts.aggregate_by)

    def _alert(
        self,
        name: str,
        expr: str,
        cfg: AlertBase,
        summary: str,
        description: str,
        severity: str | None = None,
        **labels: str,
    ) -> Rule:
        """One alerting rule; `labels` repeat a series label so that per-threshold rules of
        one alert differ in their labels (promtool's duplicate-rule lint)."""
        return {
            "alert": name,
            "expr": expr,
            "for": cfg.for_duration,
            "labels": {**self.a.labels, **labels, "severity": severity or cfg.severity},
            "annotations": {
                "summary": summary,
                "description": description,
                "runbook_url": f"{self.a.runbook_base_url}#{name.lower()}",
            },
        }

    # -- recording rules: one name per aggregate the alerts (and people) read -------------
    def recording_rules(self) -> list[Rule]:
        a, agg = self.a, self.agg
        rules: list[Rule] = []
        if a.failure_modes.enabled:
            w = a.failure_modes.window
            scored = f"rate(ragpulse_scored_events_total[{w}])"
            modes = f"rate(ragpulse_failure_modes_total[{w}])"
            rules += [
                _record(
                    f"ragpulse:scored_events:rate{w}",
                    f"sum {by(agg, 'service', 'prompt_version')} ({scored})",
                ),
                _record(
                    f"ragpulse:failure_mode_ratio:rate{w}",
                    f"sum {by(agg, 'failure_mode', 'service', 'prompt_version')} ({modes})\n"
                    f"  / ignoring (failure_mode) group_left\nragpulse:scored_events:rate{w}",
                ),
            ]
        if a.dead_letters.enabled:
            w = a.dead_letters.window
            events = f"ragpulse:events:rate{w}"
            rules += [
                _record(events, f"sum {by(agg, 'outcome')} (rate(ragpulse_events_total[{w}]))"),
                _record(
                    f"ragpulse:dead_letter_ratio:rate{w}",
                    f'{events}{{outcome="dead_lettered"}}\n'
                    f'  / ignoring (outcome)\n{events}{{outcome="consumed"}}',
                ),
            ]
        if a.judge_errors.enabled:
            w, j = a.judge_errors.window, by(agg, "judge")
            calls = f"ragpulse_judge_requests_total{{{JUDGE_ATTEMPTS}}}"
            failed = 'ragpulse_judge_requests_total{outcome="judge_error"}'
            rules += [
                _record(f"ragpulse:judge_requests:rate{w}", f"sum {j} (rate({calls}[{w}]))"),
                _record(
                    f"ragpulse:judge_error_ratio:rate{w}",
                    f"sum {j} (rate({failed}[{w}]))\n  /\nragpulse:judge_requests:rate{w}",
                ),
            ]
        if a.score_regression.enabled:
            s = a.score_regression
            w, b, m = s.window, s.baseline_window, by(agg, "metric")
            count = f"sum {m} (rate(ragpulse_metric_score_count[{w}]))"
            rules += [
                _record(
                    f"ragpulse:metric_score:mean{w}",
                    f"sum {m} (rate(ragpulse_metric_score_sum[{w}]))\n  /\n({count} > 0)",
                ),
                _record(
                    f"ragpulse:metric_score_count:increase{w}",
                    f"sum {m} (increase(ragpulse_metric_score_count[{w}]))",
                ),
                _record(
                    f"ragpulse:metric_score:mean{w}_avg{b}",
                    f"avg_over_time(ragpulse:metric_score:mean{w}[{b}] offset {w})",
                ),
            ]
        if a.critical_gate.enabled:
            w, g = a.critical_gate.window, by(agg, "gate")
            results = f'increase(ragpulse_gate_results_total{{result="pass"}}[{w}])'
            evaluations = f"ragpulse:gate_evaluations:increase{w}"
            rules += [
                _record(evaluations, f"sum {g} (increase(ragpulse_gate_results_total[{w}]))"),
                _record(  # `or ... * 0`: a gate that never passed in the window has ratio 0
                    f"ragpulse:gate_pass_ratio:increase{w}",
                    f"(\n  sum {g} ({results})\n  or\n  {evaluations} * 0\n)\n"
                    f"  /\n({evaluations} > 0)",
                ),
            ]
        if a.consumer_lag.enabled:
            lag = f"sum {by(agg)} (ragpulse_consumer_lag)"
            rules.append(_record("ragpulse:consumer_lag:sum", lag))
        return rules

    # -- alerting rules ---------------------------------------------------------------------
    def alerting_rules(self) -> list[Rule]:
        a = self.a
        parts = [
            (a.drift, self._drift),
            (a.score_regression, self._score_regression),
            (a.critical_gate, self._critical_gate),
            (a.judge_errors, self._judge_errors),
            (a.consumer_lag, self._consumer_lag),
            (a.consumer_stalled, self._consumer_stalled),
            (a.no_events, self._no_events),
            (a.failure_modes, self._failure_modes),
            (a.dead_letters, self._dead_letters),
            (a.not_ready, self._not_ready),
        ]
        return [rule for cfg, make in parts if cfg.enabled for rule in make()]

    def _drift(self) -> list[Rule]:
        # one series per fleet (its owner exports it); max_over_time bridges the seconds of
        # a hand-over between owners, so the alert neither resolves nor pages again
        expr = (
            f"max {by(self.agg, 'metric', 'detector', 'service')}"
            " (max_over_time(ragpulse_drift_alarm[2m])) > 0"
        )
        return [self._alert(
            "RagpulseDriftAlarm", expr, self.a.drift,
            "Drift on {{ $labels.metric }} ({{ $labels.detector }}),"
            " service {{ $labels.service }}",
            "The {{ $labels.detector }} drift detector reports that {{ $labels.metric }} of service"
            " {{ $labels.service }} left its reference band. The alarm event on rag.alarms has"
            " the direction, reference mean, current mean and since when.",
        )]  # fmt: skip

    def _score_regression(self) -> list[Rule]:
        s = self.a.score_regression
        w, b = s.window, s.baseline_window
        mean, base = f"ragpulse:metric_score:mean{w}", f"ragpulse:metric_score:mean{w}_avg{b}"
        rules = []
        cases = [(f'metric="{m}"', f, {"metric": m}) for m, f in sorted(s.floors.items())]
        other = f'metric!~"{regex_alternation(s.floors)}"' if s.floors else ""
        cases.append((other, s.default_floor, {}))
        for matcher, floor, labels in cases:
            expr = (
                f"{mean}{{{matcher}}} < {floor:g}\nand\n{mean}{{{matcher}}} < {base} - {s.margin:g}"
                f"\nand\nragpulse:metric_score_count:increase{w} >= {s.min_samples}"
            )
            rules.append(self._alert(
                "RagpulseScoreRegression", expr, s,
                "{{ $labels.metric }} mean score fell to {{ printf \"%.2f\" $value }}",
                f"The {w} mean of judge metric {{{{ $labels.metric }}}} is"
                f" {{{{ printf \"%.3f\" $value }}}}: below its floor {floor:g} and more than"
                f" {s.margin:g} below its own {b} level (at least {s.min_samples} judged turns).",
                **labels,
            ))  # fmt: skip
        return rules

    def _critical_gate(self) -> list[Rule]:
        g = self.a.critical_gate
        w, sel = g.window, f'{{gate=~"{regex_alternation(g.gates)}"}}'
        expr = (
            f"ragpulse:gate_pass_ratio:increase{w}{sel} < {g.floor:g}\nand\n"
            f"ragpulse:gate_evaluations:increase{w}{sel} >= {g.min_evaluations}"
        )
        return [self._alert(
            "RagpulseCriticalGateFailing", expr, g,
            "Critical gate {{ $labels.gate }} passes only {{ $value | humanizePercentage }}",
            f"Over the last {w} only {{{{ $value | humanizePercentage }}}} of judged turns"
            f" pass the critical gate {{{{ $labels.gate }}}} (floor {percent(g.floor)}, at least"
            f" {g.min_evaluations} evaluations).",
        )]  # fmt: skip

    def _judge_errors(self) -> list[Rule]:
        j = self.a.judge_errors
        w = j.window
        expr = (
            f"ragpulse:judge_error_ratio:rate{w} > {j.ceiling:g}\nand\n"
            f"ragpulse:judge_requests:rate{w} * {duration_seconds(w):g} >= {j.min_requests}"
        )
        return [self._alert(
            "RagpulseJudgeErrorRatioHigh", expr, j,
            "Judge {{ $labels.judge }} fails {{ $value | humanizePercentage }} of calls",
            f"{{{{ $value | humanizePercentage }}}} of calls to judge {{{{ $labels.judge }}}} ended"
            f" as judge_error over {w} (ceiling {percent(j.ceiling)}). Sampled turns go"
            " unscored; the detector path keeps running.",
        )]  # fmt: skip

    def _consumer_lag(self) -> list[Rule]:
        c = self.a.consumer_lag
        lag = "ragpulse:consumer_lag:sum"
        expr = f"{lag} > {c.ceiling}\nand\nderiv({lag}[{c.growth_window}]) > 0"
        return [self._alert(
            "RagpulseConsumerLagGrowing", expr, c,
            "ragpulse is {{ $value | humanize }} messages behind and falling further",
            f"Consumer lag summed over partitions is {{{{ $value | humanize }}}} messages (ceiling"
            f" {c.ceiling}) and grew over the last {c.growth_window}.",
        )]  # fmt: skip

    def _consumer_stalled(self) -> list[Rule]:
        expr = f"max {by(self.agg, 'partition')} (ragpulse_consumer_stalled) > 0"
        return [self._alert(
            "RagpulseConsumerStalled", expr, self.a.consumer_stalled,
            "Partition {{ $labels.partition }} has lag but its committed offset does not move",
            "Partition {{ $labels.partition }} of the input topic has messages waiting while the"
            " group's committed offset has stood still (progress.stall_after_s), for"
            f" {self.a.consumer_stalled.for_duration}: its events are not being scored, even if"
            " the replica reads ready.",
        )]  # fmt: skip

    def _no_events(self) -> list[Rule]:
        n = self.a.no_events
        ts = "ragpulse_last_event_timestamp_seconds"
        secs = f"{duration_seconds(n.silence):g}"
        expr = f"time() - max {by(self.agg)} ({ts}) > {secs}\nor\nabsent({ts})"
        return [self._alert(
            "RagpulseNoEvents", expr, n,
            f"ragpulse has read no event for more than {n.silence}",
            f"No message was read from the input topic for more than {n.silence}, or no series"
            f" {ts} exists at all (no ragpulse instance is scraped). Nothing is watching the"
            " RAG service's answers.",
        )]  # fmt: skip

    def _failure_modes(self) -> list[Rule]:
        f, agg = self.a.failure_modes, self.agg
        w = f.window
        own = sorted(set(f.ceilings) | set(f.mode_severity))
        cases = [(f'failure_mode="{m}"', f.ceilings.get(m, f.default_ceiling), m) for m in own]
        other = f'failure_mode!~"{regex_alternation(own)}"' if own else ""
        cases.append((other, f.default_ceiling, ""))
        volume = f"ragpulse:scored_events:rate{w} * {duration_seconds(w):g} >= {f.min_events}"
        rules = []
        for matcher, ceiling, mode in cases:
            expr = (
                f"ragpulse:failure_mode_ratio:rate{w}{{{matcher}}} > {ceiling:g}\n"
                f"and on ({', '.join([*agg, 'service', 'prompt_version'])})\n{volume}"
            )
            rules.append(self._alert(
                "RagpulseFailureModeRateHigh", expr, f,
                "{{ $labels.failure_mode }} in {{ $value | humanizePercentage }} of turns of"
                " {{ $labels.service }} / {{ $labels.prompt_version }}",
                f"{{{{ $value | humanizePercentage }}}} of scored turns of service"
                " {{ $labels.service }}, prompt version {{ $labels.prompt_version }} show"
                f" {{{{ $labels.failure_mode }}}} over {w} (ceiling {percent(ceiling)}).",
                severity=f.mode_severity.get(mode),
                **({"failure_mode": mode} if mode else {}),
            ))  # fmt: skip
        return rules

    def _dead_letters(self) -> list[Rule]:
        d = self.a.dead_letters
        w = d.window
        expr = (
            f"ragpulse:dead_letter_ratio:rate{w} > {d.ceiling:g}\nand ignoring (outcome)\n"
            f'ragpulse:events:rate{w}{{outcome="consumed"}} * {duration_seconds(w):g}'
            f" >= {d.min_events}"
        )
        return [self._alert(
            "RagpulseDeadLetterRatioHigh", expr, d,
            "{{ $value | humanizePercentage }} of messages go to the dead-letter topic",
            f"{{{{ $value | humanizePercentage }}}} of consumed messages were dead-lettered"
            f" over {w} (ceiling {percent(d.ceiling)}); ragpulse_invalid_events_total says why.",
        )]  # fmt: skip

    def _not_ready(self) -> list[Rule]:
        n = self.a.not_ready
        return [self._alert(
            "RagpulseNotReady", f"max {by(self.agg)} (ragpulse_ready) == 0", n,
            "No ragpulse replica is ready",
            f"No replica of this ragpulse deployment has answered /readyz with 200 for"
            f" {n.for_duration}: no consumer has a partition assignment or the broker has not"
            " answered. Nothing is being consumed.",
        )]  # fmt: skip
