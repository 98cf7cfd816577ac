"""Quality SLOs (the `slos` settings) and their burn-rate alerts (`alerts.slo_burn`).

An SLO promises that a share (`objective`) of one kind of event is good over a rolling
`period`. Its SLI is one of a fixed set (`SLI_KINDS`, docs/slo.md):

- `failure_free`: a scored turn showing none of `failure_modes`;
- `judge_pass`: a base/stratum-sampled judged turn passing `gate` (boosted turns never count);
- `reference_correct`: a golden/labelled turn whose `metric` scores at least `floor`;
- `valid_events`: a consumed message that was not dead-lettered (`service` is "all").

The burn rate is the error ratio divided by the error budget (1 - objective). The alerts
are the SRE Workbook's multiwindow, multi-burn-rate pairs: each names the share of the
period's budget that may burn in its long window, so the factor follows the period
(2 % of a 30d budget in 1h is a burn of 14.4; of a 28d budget, 13.44).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from exporters.durations import duration_seconds as seconds
from stream.contract.failure_modes import FAILURE_MODES
from stream.contract.sections import Section

__all__ = [
    "DEFAULT_SLOS",
    "SLI_KINDS",
    "BurnWindow",
    "SloBurnAlert",
    "SloSpec",
    "scaled_duration",
    "seconds",
]

#: the SLIs an SLO can be built on
SLI_KINDS = ("failure_free", "judge_pass", "reference_correct", "valid_events")
SliKind = Literal["failure_free", "judge_pass", "reference_correct", "valid_events"]

_DURATION = r"^([0-9]+(ms|s|m|h|d|w|y))+$"
Duration = Annotated[str, Field(pattern=_DURATION)]
SloName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,62}$")]


def scaled_duration(duration: str, scale: float) -> str:
    """`duration` times `scale` as a Prometheus duration ('1h', 1/60 -> '1m'); whole
    milliseconds, at least 1s."""
    ms = max(round(seconds(duration) * scale * 1000), 1000)
    out = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= size:
            out.append(f"{ms // size}{unit}")
            ms %= size
    if ms:
        out.append(f"{ms}ms")
    return "".join(out)


class SloSpec(Section):
    """One quality SLO."""

    name: SloName = Field(description="`slo` label value; lower case, digits, - and _")
    sli: SliKind = Field(description="what a good event is: " + ", ".join(SLI_KINDS))
    objective: float = Field(gt=0.0, lt=1.0, description="share of good events promised")
    period: Duration = Field("30d", description="rolling period of the objective")
    services: list[str] = Field(
        default_factory=list,
        description="services the SLO covers (their raw `service` field); empty: all",
    )
    failure_modes: list[str] = Field(
        default_factory=list,
        validate_default=True,
        description="failure_free: a turn with any of these is bad",
    )
    gate: Literal["critical", "quality", "diagnostic"] = Field(
        "critical", description="judge_pass: the gate a good judged turn passes"
    )
    metric: str = Field(
        "answer_correctness", description="reference_correct: the reference-based metric"
    )
    floor: float = Field(0.5, ge=0.0, le=1.0, description="reference_correct: good at >= floor")
    min_events: int = Field(
        100,
        ge=1,
        description="events an alert's long window must hold before it may fire"
        " (docs/slo.md: sizing the guard)",
    )

    @field_validator("period")
    @classmethod
    def _period(cls, v: str) -> str:
        if seconds(v) < 3600:
            raise ValueError("period shorter than 1h")
        return v

    @field_validator("services")
    @classmethod
    def _services(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if v and info.data.get("sli") == "valid_events":
            raise ValueError("valid_events counts messages before they have a service: no services")
        return v

    @field_validator("failure_modes")
    @classmethod
    def _modes(cls, v: list[str], info: ValidationInfo) -> list[str]:
        sli = info.data.get("sli")
        if sli == "failure_free":
            if not v:
                raise ValueError(
                    "failure_free needs failure_modes (the modes that make a turn bad)"
                )
            unknown = sorted(set(v) - set(FAILURE_MODES))
            if unknown:
                raise ValueError(f"unknown failure_modes {unknown}; known: {list(FAILURE_MODES)}")
        elif v:
            raise ValueError(f"failure_modes apply to sli failure_free, not {sli}")
        return v


#: the demo's two services (docs/slo.md explains each choice)
DEFAULT_SLOS: tuple[dict[str, object], ...] = (
    {"name": "pii-free", "sli": "failure_free", "objective": 0.98, "failure_modes": ["pii_leak"]},
    {"name": "valid-events", "sli": "valid_events", "objective": 0.99},
    {
        "name": "critical-gate",
        "sli": "judge_pass",
        "objective": 0.9,
        "gate": "critical",
        "min_events": 30,
    },
    {
        "name": "canary-correct",
        "sli": "reference_correct",
        "objective": 0.8,
        "metric": "answer_correctness",
        "floor": 0.5,
        "min_events": 20,
    },
)


class BurnWindow(Section):
    """One multiwindow alert: fires while the burn rate exceeds the factor over both."""

    severity: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")] = Field(
        description="`severity` label (page / ticket)"
    )
    budget_consumed: float = Field(
        gt=0.0, le=1.0, description="share of the period's budget burnt in `long` to alert"
    )
    long: Duration = Field(description="long window: the burn rate has lasted")
    short: Duration = Field(description="short window: the burn is still going on")

    @model_validator(mode="after")
    def _short_below_long(self) -> BurnWindow:
        if seconds(self.short) >= seconds(self.long):
            raise ValueError(f"short window {self.short} must be shorter than long {self.long}")
        return self

    def factor(self, period: str) -> float:
        """The burn rate that spends `budget_consumed` of the budget in `long`."""
        return self.budget_consumed * seconds(period) / seconds(self.long)

    def can_fire(self, slo: SloSpec) -> bool:
        """Can the error ratio exceed factor x budget? (Not when every event is bad: a 90 %
        objective's burn rate tops out at 10, below the 14.4 of the 1h/5m page.)"""
        return self.factor(slo.period) * (1 - slo.objective) < 1


def _workbook() -> list[BurnWindow]:
    return [
        BurnWindow(severity="page", budget_consumed=0.02, long="1h", short="5m"),
        BurnWindow(severity="page", budget_consumed=0.05, long="6h", short="30m"),
        BurnWindow(severity="ticket", budget_consumed=0.10, long="1d", short="2h"),
        BurnWindow(severity="ticket", budget_consumed=0.10, long="3d", short="6h"),
    ]


class SloBurnAlert(Section):
    """`RagpulseErrorBudgetBurn`: the multiwindow, multi-burn-rate alerts of every SLO."""

    enabled: bool = Field(True, description="generate the SLO rules and alerts")
    for_duration: Duration = Field("0s", description="condition must hold this long (`for`)")
    windows: list[BurnWindow] = Field(
        default_factory=_workbook,
        min_length=1,
        description="the alert pairs (default: the SRE Workbook's four)",
    )
    time_scale: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="multiplies every SLO window and period (factors unchanged): below 1"
        " for demos and tests only (1/60 turns 1h into 1m)",
    )

    @field_validator("windows")
    @classmethod
    def _distinct(cls, v: list[BurnWindow]) -> list[BurnWindow]:
        pairs = [(w.long, w.short) for w in v]
        if len(set(pairs)) != len(pairs):
            raise ValueError("two windows with the same long/short pair")
        return v
