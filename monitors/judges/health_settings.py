"""Judge health settings (`judge.health`): canaries and self-consistency (docs/judges.md)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from stream.contract.sections import ComponentDict, Section

__all__ = ["CanarySettings", "ConsistencySettings", "JudgeHealthSettings"]


def _canary_detectors() -> list[dict[str, Any]]:
    # a round is one sample: 12 rounds of reference, the last 6 tested after each round
    return [
        {
            "type": "mannwhitney_window",
            "reference_size": 12,
            "window_size": 6,
            "check_every": 1,
            "alpha": 0.001,
            "cooldown": 12,
        }
    ]


class CanarySettings(Section):
    enabled: bool = Field(True, description="re-judge the canary set every `interval_s`")
    file: str | None = Field(
        None,
        description="JSONL canary set ({id, event, expected}); null: the bundled set"
        " (8 turns). In Kubernetes: a file mounted from a ConfigMap",
    )
    interval_s: float = Field(
        300.0,
        ge=0.05,
        le=86_400,
        description="one round (every canary turn judged once) per interval; counted in"
        " the sampling budget, a round that does not fit is skipped and counted",
    )
    detectors: list[ComponentDict] = Field(
        default_factory=_canary_detectors,
        description="drift detectors on each metric's per-round deviation from the expected"
        " verdicts, e.g. {type: mannwhitney_window, ...}",
    )
    min_hold_s: float = Field(1800.0, ge=0, description="a judge-drift alarm stays up this long")
    clear_after_s: float = Field(
        1800.0, ge=0, description="quiet time back at the reference level before it clears"
    )


class ConsistencySettings(Section):
    rate: float = Field(
        0.02,
        ge=0,
        le=1,
        description="share of sampled turns judged a second time, context chunks shuffled"
        " (not for a deterministic judge: the embedded one); counted in the budget",
    )


class JudgeHealthSettings(Section):
    canaries: CanarySettings = Field(default_factory=CanarySettings)
    consistency: ConsistencySettings = Field(default_factory=ConsistencySettings)
