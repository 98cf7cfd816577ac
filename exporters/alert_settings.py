"""The settings of the generated alert rules: thresholds, `for` durations, severities.

`AlertSettings` is the `alerts` section of the settings (and of `rules export` /
`dashboards export`); `exporters.promql` turns it into PromQL and `exporters.rules` into
rule files.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from exporters.slo_settings import SloBurnAlert
from stream.contract.sections import Section

__all__ = [
    "ALERT_NAMES",
    "DURATION_PATTERN",
    "LABEL_PATTERN",
    "RESERVED_LABELS",
    "AlertBase",
    "AlertSettings",
]

#: a Prometheus duration such as 90s, 10m, 1h30m, 7d
DURATION_PATTERN = r"^([0-9]+(ms|s|m|h|d|w|y))+$"
#: label names, and the values ragpulse writes into matchers (metric, failure mode, gate)
LABEL_PATTERN = r"^[a-zA-Z_][a-zA-Z0-9_]*$"

Duration = Annotated[str, Field(pattern=DURATION_PATTERN)]
LabelName = Annotated[str, Field(pattern=LABEL_PATTERN)]
Severity = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
Ratio = Annotated[float, Field(ge=0.0, le=1.0)]

#: labels ragpulse's alerts carry from their expressions or set per alert: a static label
#: (`alerts.labels`) of one of these names would overwrite them
RESERVED_LABELS = frozenset({
    "alertname", "severity", "service", "prompt_version", "failure_mode", "metric",
    "detector", "gate", "judge", "partition", "slo", "long_window", "short_window",
})  # fmt: skip

#: every alert ragpulse generates; docs/runbook.md has one section (anchor) per name
ALERT_NAMES = (
    "RagpulseDriftAlarm",
    "RagpulseScoreRegression",
    "RagpulseCriticalGateFailing",
    "RagpulseJudgeErrorRatioHigh",
    "RagpulseConsumerLagGrowing",
    "RagpulseConsumerStalled",
    "RagpulseNoEvents",
    "RagpulseFailureModeRateHigh",
    "RagpulseDeadLetterRatioHigh",
    "RagpulseNotReady",
    "RagpulseErrorBudgetBurn",
    "RagpulseJudgeDrift",
    "RagpulseJudgeSilent",
    "RagpulseJudgeInconsistent",
)


class AlertBase(Section):
    enabled: bool = Field(True, description="generate this alert")
    severity: Severity = Field("ticket", description="`severity` label (routing: page / ticket)")
    for_duration: Duration = Field("15m", description="condition must hold this long (`for`)")


class DriftAlert(AlertBase):
    for_duration: Duration = Field("1m", description="alarm must hold this long (`for`)")


class ScoreRegressionAlert(AlertBase):
    severity: Severity = Field("page", description="`severity` label")
    floors: dict[LabelName, Ratio] = Field(
        default_factory=lambda: {
            "faithfulness": 0.70,
            "answer_relevance": 0.70,
            "context_relevance": 0.60,
            "s_final": 0.70,
        },
        description="judge metric -> floor of its rolling mean",
    )
    default_floor: Ratio = Field(0.60, description="floor for judge metrics not in `floors`")
    margin: Ratio = Field(0.05, description="also required: mean below its own baseline by this")
    window: Duration = Field("1h", description="rolling-mean window (from the score histogram)")
    baseline_window: Duration = Field("7d", description="the metric's own level: mean over this")
    min_samples: int = Field(30, ge=1, description="judged turns needed in `window` to alert")


class GateAlert(AlertBase):
    severity: Severity = Field("page", description="`severity` label")
    gates: list[LabelName] = Field(
        default_factory=lambda: ["critical"],
        min_length=1,
        description="`gate` label values that are critical",
    )
    window: Duration = Field(
        "1h", description="pass ratio over this window (increase of ragpulse_gate_results_total)"
    )
    floor: Ratio = Field(0.95, description="alert when the pass ratio is below this")
    min_evaluations: int = Field(
        30, ge=1, description="gate evaluations (judged turns) needed in `window` to alert"
    )


class JudgeErrorAlert(AlertBase):
    ceiling: Ratio = Field(0.20, description="judge_error / (ok + judge_error) above this")
    window: Duration = Field("10m", description="rate window")
    min_requests: int = Field(20, ge=1, description="judge calls needed in `window` to alert")


class JudgeDriftAlert(AlertBase):
    for_duration: Duration = Field("1m", description="alarm must hold this long (`for`)")


class JudgeSilentAlert(AlertBase):
    for_duration: Duration = Field("2m", description="condition must hold this long (`for`)")
    silence: Duration = Field(
        "10m", description="no verdict (ok or error) for this long while turns wait for the judge"
    )


class JudgeInconsistentAlert(AlertBase):
    ceiling: Ratio = Field(
        0.20, description="share of turns judged twice whose verdicts flip across the gate floor"
    )
    window: Duration = Field("6h", description="window of the flip rate")
    min_pairs: int = Field(20, ge=1, description="turns judged twice needed in `window`")


class ConsumerLagAlert(AlertBase):
    for_duration: Duration = Field("10m", description="condition must hold this long (`for`)")
    ceiling: int = Field(10_000, ge=0, description="summed lag (messages) above this ...")
    growth_window: Duration = Field("15m", description="... and still growing over this window")


class ConsumerStalledAlert(AlertBase):
    for_duration: Duration = Field(
        "5m", description="stalled this long (`for`), after `progress.stall_after_s`"
    )


class NoEventsAlert(AlertBase):
    for_duration: Duration = Field("5m", description="condition must hold this long (`for`)")
    silence: Duration = Field("15m", description="no message read for this long")


class FailureModeAlert(AlertBase):
    for_duration: Duration = Field("10m", description="condition must hold this long (`for`)")
    ceilings: dict[LabelName, Ratio] = Field(
        default_factory=lambda: {
            "pii_leak": 0.01,
            "training_cutoff_excuse": 0.05,
            "false_rejection": 0.10,
        },
        description="failure mode -> ceiling of its share of scored turns",
    )
    default_ceiling: Ratio = Field(0.05, description="ceiling for failure modes not in `ceilings`")
    mode_severity: dict[LabelName, Severity] = Field(
        default_factory=lambda: {"pii_leak": "page"},
        description="failure mode -> severity, overriding `severity`",
    )
    window: Duration = Field("10m", description="rate window")
    min_events: int = Field(100, ge=1, description="scored turns in `window` per service/version")


class DeadLetterAlert(AlertBase):
    ceiling: Ratio = Field(0.01, description="dead_lettered / consumed above this")
    window: Duration = Field("15m", description="rate window")
    min_events: int = Field(100, ge=1, description="consumed messages needed in `window`")


class NotReadyAlert(AlertBase):
    for_duration: Duration = Field("10m", description="not ready for this long (`for`)")


class AlertSettings(Section):
    """Thresholds, `for` durations and severities of the generated Prometheus rules."""

    runbook_base_url: str = Field(
        "docs/runbook.md", description="where docs/runbook.md is published; #anchor is appended"
    )
    aggregate_by: list[LabelName] = Field(
        default_factory=lambda: ["namespace", "job"],
        description="target labels kept when summing over pods (one deployment = one alert)",
    )
    labels: dict[LabelName, str] = Field(
        default_factory=dict, description="static labels added to every alert (e.g. team)"
    )
    drift: DriftAlert = Field(default_factory=DriftAlert)
    score_regression: ScoreRegressionAlert = Field(default_factory=ScoreRegressionAlert)
    critical_gate: GateAlert = Field(default_factory=GateAlert)
    judge_errors: JudgeErrorAlert = Field(default_factory=JudgeErrorAlert)
    consumer_lag: ConsumerLagAlert = Field(default_factory=ConsumerLagAlert)
    consumer_stalled: ConsumerStalledAlert = Field(default_factory=ConsumerStalledAlert)
    no_events: NoEventsAlert = Field(default_factory=NoEventsAlert)
    failure_modes: FailureModeAlert = Field(default_factory=FailureModeAlert)
    dead_letters: DeadLetterAlert = Field(default_factory=DeadLetterAlert)
    not_ready: NotReadyAlert = Field(default_factory=NotReadyAlert)
    slo_burn: SloBurnAlert = Field(default_factory=SloBurnAlert)
    judge_drift: JudgeDriftAlert = Field(default_factory=JudgeDriftAlert)
    judge_silent: JudgeSilentAlert = Field(default_factory=JudgeSilentAlert)
    judge_inconsistent: JudgeInconsistentAlert = Field(default_factory=JudgeInconsistentAlert)

    @field_validator("labels")
    @classmethod
    def _reserved(cls, v: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        clash = sorted((RESERVED_LABELS | set(info.data.get("aggregate_by") or ())) & set(v))
        if clash:
            raise ValueError(f"{clash} are set by ragpulse per alert")
        return v
