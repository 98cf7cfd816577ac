"""The panels of the ragpulse dashboard as data: title, description, PromQL, unit, layout.

`exporters.dashboard` turns them into Grafana JSON with the foundation SDK. Selectors use
the dashboard's template variables: `$namespace`/`$job` (the alerts' `aggregate_by`
labels), `$service`, `$model`, `$prompt_version`, `$metric`; series without a label are not
filtered by it (detector hits and judge scores carry no `service`).

The reference-based row reads golden/canary and reviewed turns (`labels.expected_answer` /
`labels.required_information`): their reference-based scores feed `ragpulse_metric_score`
like population scores (exporters.judge_metrics), so the same histogram queries apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from exporters.alert_settings import AlertSettings
from exporters.promql import JUDGE_ATTEMPTS, SEVERITY_BANDS, regex_alternation
from exporters.slo_settings import scaled_duration

__all__ = ["JUDGE_ATTEMPTS", "REFERENCE_PANEL_METRICS", "PanelSpec", "Sel", "dashboard_rows"]

RATE = "$__rate_interval"
Query = tuple[str, str]  # (PromQL, legend format)
#: reference-based outputs shown on the dashboard (one per reference metric: the holistic
#: grade, the analytic F1, DeCE's F2); all in monitors.evaluation REFERENCE_METRICS
REFERENCE_PANEL_METRICS = ("answer_correctness", "answer_f1", "dece_f2")


@dataclass(frozen=True)
class PanelSpec:
    title: str
    description: str
    queries: tuple[Query, ...]
    unit: str = "short"
    width: int = 12
    kind: Literal["timeseries", "stat", "state-timeline", "bargauge"] = "timeseries"
    threshold: float | None = None  # dashed line: the matching alert's threshold
    bounds: tuple[float, float] | None = None
    percent_stack: bool = False
    repeat: str | None = None  # template variable to repeat the panel for


class Sel:
    """Selectors with the dashboard's template variables."""

    def __init__(self, alerts: AlertSettings) -> None:
        self.deploy = [f'{lbl}=~"${lbl}"' for lbl in alerts.aggregate_by]

    def __call__(self, metric: str, *matchers: str) -> str:
        used = [*self.deploy, *matchers]
        return f"{metric}{{{', '.join(used)}}}" if used else metric

    def rate(self, metric: str, *matchers: str, window: str = RATE) -> str:
        return f"rate({self(metric, *matchers)}[{window}])"


SVC = ('service=~"$service"', 'prompt_version=~"$prompt_version"')


def _quantiles(s: Sel, histogram: str) -> tuple[Query, ...]:
    return tuple(
        (f"histogram_quantile({q:g}, sum by (le) ({s.rate(histogram + '_bucket')}))", f"p{p}")
        for q, p in ((0.5, 50), (0.95, 95))
    )


def _mean(s: Sel, matcher: str, window: str) -> str:
    """Mean score per metric over `window` from the `ragpulse_metric_score` histogram."""
    return (
        f"sum by (metric) ({s.rate('ragpulse_metric_score_sum', matcher, window=window)})\n  /\n"
        f"sum by (metric) ({s.rate('ragpulse_metric_score_count', matcher, window=window)})"
    )


def _bands(s: Sel, matcher: str, window: str) -> tuple[Query, ...]:
    """Judged turns per severity band over `window` (a percent stack makes them shares)."""
    bands: list[Query] = []
    for name, lo, hi in SEVERITY_BANDS:
        upper = s.rate("ragpulse_metric_score_bucket", matcher, f'le="{hi}"', window=window)
        lower = s.rate("ragpulse_metric_score_bucket", matcher, f'le="{lo}"', window=window)
        bands.append((f"sum({upper})" + (f" - sum({lower})" if lo is not None else ""), name))
    return tuple(bands)


def _stream(a: AlertSettings, s: Sel) -> list[PanelSpec]:
    lag = a.consumer_lag.ceiling if a.consumer_lag.enabled else None
    return [
        PanelSpec("Events/s by outcome", "Messages read from the input topic: every message is "
                  "consumed, then ends as scored, invalid or duplicate; dead_lettered = invalid "
                  "messages written to the dead-letter topic.",
                  ((f"sum by (outcome) ({s.rate('ragpulse_events_total')})", "{{outcome}}"),),
                  unit="ops"),
        PanelSpec("Dead letters/s by reason", "Why messages went to the dead-letter topic "
                  f"(RagpulseDeadLetterRatioHigh: above {a.dead_letters.ceiling:g} of consumed).",
                  ((f"sum by (reason) ({s.rate('ragpulse_invalid_events_total')})", "{{reason}}"),),
                  unit="ops"),
        PanelSpec("Consumer lag", "Log-end offset minus the group's committed offset per"
                  " partition, and the sum (dashed: RagpulseConsumerLagGrowing ceiling).",
                  ((f"sum by (partition) ({s('ragpulse_consumer_lag')})", "{{partition}}"),
                   (f"sum({s('ragpulse_consumer_lag')})", "total")),
                  width=8, threshold=lag),
        PanelSpec("Stalled partitions", "Partitions with lag whose committed offset has not"
                  " moved for progress.stall_after_s (RagpulseConsumerStalled).",
                  ((f"sum({s('ragpulse_consumer_stalled')})", "stalled"),),
                  kind="stat", width=4),
        PanelSpec("Detector time per event", "p50 / p95 time to run all detectors on one event.",
                  _quantiles(s, "ragpulse_detect_seconds"), unit="s", width=8),
        PanelSpec("Ready replicas", "Replicas whose /readyz answers 200, of those scraped.",
                  ((f"sum({s('ragpulse_ready')})", "ready"),
                   (f"count({s('ragpulse_ready')})", "scraped")),
                  kind="stat", width=4),
    ]  # fmt: skip


def _detectors(a: AlertSettings, s: Sel) -> list[PanelSpec]:
    ratio = (
        "sum by (failure_mode, service, prompt_version)"
        f" ({s.rate('ragpulse_failure_modes_total', *SVC)})\n"
        "  / ignoring (failure_mode) group_left\n"
        f"sum by (service, prompt_version) ({s.rate('ragpulse_scored_events_total', *SVC)})"
    )
    scored = s.rate("ragpulse_scored_events_total", *SVC, 'model=~"$model"')
    return [
        PanelSpec("Failure-mode rate by service / prompt version", "Share of scored turns "
                  "showing each failure mode: what RagpulseFailureModeRateHigh evaluates "
                  f"over {a.failure_modes.window}.",
                  ((ratio, "{{failure_mode}} · {{service}} {{prompt_version}}"),),
                  unit="percentunit", width=24),
        PanelSpec("Detector hits/s by detector / category", "Rule detector findings (all "
                  "services: detector hits carry no service label).",
                  ((f"sum by (detector, category) ({s.rate('ragpulse_detector_hits_total')})",
                    "{{detector}}/{{category}}"),), unit="ops"),
        PanelSpec("Scored turns/s and detector errors/s", "Scored turns by deployment (the "
                  "denominator of failure-mode rates) and detector calls that raised.",
                  ((f"sum by (service, model, prompt_version) ({scored})",
                    "{{service}} {{model}} {{prompt_version}}"),
                   (f"sum by (detector) ({s.rate('ragpulse_detector_errors_total')})",
                    "errors {{detector}}")), unit="ops"),
    ]  # fmt: skip


def _judge_metrics(a: AlertSettings, s: Sel) -> list[PanelSpec]:
    w, metric = a.score_regression.window, 'metric=~"$metric"'
    gate = a.critical_gate.floor if a.critical_gate.enabled else None
    drift = s("ragpulse_drift_alarm", 'service=~"$service"')
    return [
        PanelSpec(f"Judge score mean ({w})", f"Rolling {w} mean of each judge metric from the "
                  "ragpulse_metric_score histogram over all replicas, as "
                  "RagpulseScoreRegression reads it.",
                  ((_mean(s, metric, w), "{{metric}}"),), unit="none", bounds=(0, 1)),
        PanelSpec("Gate pass ratio", "Share of judged turns passing each gate (dashed: the "
                  "critical gate floor).",
                  ((f"avg by (gate, window) ({s('ragpulse_gate_pass_ratio')})",
                    "{{gate}} ({{window}})"),),
                  unit="percentunit", threshold=gate, bounds=(0, 1)),
        PanelSpec("Severity bands: $metric", f"Share of judged turns per severity band over {w}:"
                  " severe ≤ 0.30 < moderate ≤ 0.60 < minor ≤ 0.85 < none. One panel per "
                  "selected judge metric.",
                  _bands(s, metric, w), unit="percentunit", width=24, percent_stack=True,
                  repeat="metric"),
        PanelSpec("Drift alarms", "ragpulse_drift_alarm per metric, detector and service: red "
                  "while an alarm is raised (also shown as annotations on every panel).",
                  ((f"max by (metric, detector, service) ({drift})",
                    "{{metric}} · {{detector}} · {{service}}"),),
                  kind="state-timeline", width=24),
    ]  # fmt: skip


def _judge_ops(a: AlertSettings, s: Sel) -> list[PanelSpec]:
    calls = s.rate("ragpulse_judge_requests_total")
    failed = s.rate("ragpulse_judge_requests_total", 'outcome="judge_error"')
    attempts = s.rate("ragpulse_judge_requests_total", JUDGE_ATTEMPTS)
    errors = f"sum by (judge) ({failed})\n  /\nsum by (judge) ({attempts})"
    ceiling = a.judge_errors.ceiling if a.judge_errors.enabled else None
    return [
        PanelSpec("Sample rate", "Effective share of turns sent to the judge; it drops when the "
                  "judge falls behind (backpressure) or the budget is spent.",
                  ((f"avg({s('ragpulse_sample_rate')})", "sample rate"),),
                  unit="percentunit", width=8, bounds=(0, 1)),
        PanelSpec("Sampled turns/s by reason, judge queue", "Why turns were sampled, and the "
                  "bounded queue in front of the judge.",
                  ((f"sum by (reason) ({s.rate('ragpulse_sampled_total')})", "{{reason}}"),
                   (f"sum({s('ragpulse_pipeline_queue_depth')})", "queue depth")), width=8),
        PanelSpec("Judge calls/min by outcome (budget)", "Judge requests per minute, to compare "
                  "with the judge budget (calls/min).",
                  ((f"sum by (judge, outcome) ({calls}) * 60", "{{judge}} {{outcome}}"),),
                  width=8),
        PanelSpec("Judge latency", "p50 / p95 of one judge call.",
                  _quantiles(s, "ragpulse_judge_latency_seconds"), unit="s", width=6),
        PanelSpec("Judge error ratio", "judge_error / (ok + judge_error) per judge (dashed: the "
                  "RagpulseJudgeErrorRatioHigh ceiling).",
                  ((errors, "{{judge}}"),), unit="percentunit", width=6, threshold=ceiling),
        PanelSpec("Judge cost rate", "Judge spend in $/hour, to compare with the $/hour budget.",
                  ((f"sum({s.rate('ragpulse_judge_cost_usd_total')}) * 3600", "$/h"),),
                  unit="currencyUSD", width=6),
        PanelSpec("Judge tokens/s by direction", "Prompt and completion tokens sent to and "
                  "received from the judge.",
                  ((f"sum by (direction) ({s.rate('ragpulse_judge_tokens_total')})",
                    "{{direction}}"),), width=6),
    ]  # fmt: skip


def _reference(a: AlertSettings, s: Sel) -> list[PanelSpec]:
    w = a.score_regression.window
    refs = f'metric=~"{regex_alternation(REFERENCE_PANEL_METRICS)}"'
    weights = f"max by (metric) ({s('ragpulse_compound_weight')})"
    turns = s.rate("ragpulse_sampled_total", 'reason="reference"')
    bands = [
        PanelSpec(f"Reference severity bands: {m}", f"Share of reference turns per severity band"
                  f" of {m} over {w}: severe ≤ 0.30 < moderate ≤ 0.60 < minor ≤ 0.85 < none.",
                  _bands(s, f'metric="{m}"', w), unit="percentunit", width=8, percent_stack=True)
        for m in REFERENCE_PANEL_METRICS
    ]  # fmt: skip
    return [
        PanelSpec(f"Reference-based score mean ({w})", f"Rolling {w} mean of answer_correctness, "
                  "answer_f1 (analytic) and dece_f2 (LLM judges) over golden/canary and reviewed "
                  "turns, the only turns these metrics score (labels.expected_answer / "
                  "labels.required_information).",
                  ((_mean(s, refs, w), "{{metric}}"),), unit="none", bounds=(0, 1)),
        PanelSpec("Compound score", "Rolling mean of the compound score (judge.compound.weights, "
                  "written by `ragpulse weights fit`) per window, averaged over replicas; turns "
                  "where every weighted metric was scored (docs/metrics.md).",
                  ((f"avg by (window) ({s('ragpulse_compound_score')})", "compound ({{window}})"),),
                  unit="none", width=8, bounds=(0, 1)),
        PanelSpec("Compound weights", "ragpulse_compound_weight: each metric's configured weight "
                  "(the compound divides by their sum).",
                  ((weights, "{{metric}}"),), kind="bargauge", width=4),
        *bands,
        PanelSpec("Reference turns judged/min", "Turns sampled because they carry a reference "
                  "(sampler reason reference, sampling.references), per minute.",
                  ((f"sum({turns}) * 60", "reference turns/min"),)),
        PanelSpec(f"Tonality mean ({w})", f"Rolling {w} mean of tonality (brand-voice guidelines "
                  "of the tonality entry of judge.metrics; LLM judges only) on "
                  "base/stratum-sampled turns.",
                  ((_mean(s, 'metric="tonality"', w), "{{metric}}"),), unit="none", bounds=(0, 1)),
    ]  # fmt: skip


def _slos(a: AlertSettings, s: Sel) -> list[PanelSpec]:
    """The SLO recording rules (exporters.slo_rules): their names hold the scaled windows."""
    cfg, svc = a.slo_burn, 'service=~"$service"'
    if not cfg.enabled:
        return []
    burn = tuple(
        (s(f"ragpulse:slo_burn_rate:rate{scaled_duration(w.long, cfg.time_scale)}", svc),
         f"{{{{slo}}}} / {{{{service}}}}: {w.long} ({w.severity} above {w.budget_consumed:.0%}"
         " of the budget)")
        for w in cfg.windows
    )  # fmt: skip
    return [
        PanelSpec("SLI over the period vs objective", "Share of good events of each SLO over"
                  " its whole period (docs/slo.md), and the objective it promises.",
                  ((f"1 - {s('ragpulse:slo_error_ratio:period', svc)}", "{{slo}} / {{service}}"),
                   ("ragpulse:slo_objective", "objective {{slo}}")),
                  unit="percentunit", width=9),
        PanelSpec("Error budget remaining", "1 - share of the period's error budget used (below"
                  " 0: the objective is missed). Valid events count service \"all\".",
                  ((f"1 - {s('ragpulse:slo_error_budget_used:period', svc)}",
                    "{{slo}} / {{service}}"),),
                  kind="bargauge", unit="percentunit", width=6),
        PanelSpec("Burn rate per alert window", "Error ratio / error budget over each alert's"
                  " long window (1 spends the budget exactly in the period;"
                  " RagpulseErrorBudgetBurn fires above the window's factor while the short"
                  " window agrees).", burn, width=9),
    ]  # fmt: skip


def dashboard_rows(alerts: AlertSettings) -> list[tuple[str, list[PanelSpec]]]:
    """(row title, panels) in dashboard order; the SLO row when its rules are generated."""
    s = Sel(alerts)
    slos = _slos(alerts, s)
    return [
        *([("Quality SLOs", slos)] if slos else []),
        ("Stream: consumption and dead letters", _stream(alerts, s)),
        ("Detectors: failure modes and hits", _detectors(alerts, s)),
        ("Judge metrics, gates and drift", _judge_metrics(alerts, s)),
        ("Reference-based quality (golden / labelled turns)", _reference(alerts, s)),
        ("Judge: sampling, budget, latency, cost, errors", _judge_ops(alerts, s)),
    ]
