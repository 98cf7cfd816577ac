"""Tiered gates: critical / quality / diagnostic thresholds over scored outcomes."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from monitors.metrics import MetricOutcome, available_metrics, create_metric
from monitors.metrics.gates import GATE_ACTIONS, GATES, GateSettings, evaluate_gates, gate_failures
from tests.monitors.metrics.stubs import options_for


def _s(metric: str, score: float) -> MetricOutcome:
    return MetricOutcome(metric, "scored", score, "j", "stub")


def test_defaults() -> None:
    tiers = {g: {t.metric: t.min for t in ts} for g, ts in GateSettings().tiers().items()}
    assert tiers["critical"] == {
        "faithfulness": 0.7,
        "hallucination": 0.7,
        "source_policy_usage": 0.5,
    }
    assert tiers["quality"]["answer_relevance"] == 0.6
    assert tiers["quality"]["context_relevance"] == 0.5
    assert tiers["quality"]["s_final"] == 0.7
    assert tiers["diagnostic"]["citation_coverage"] == 0.5
    assert GATES == ("critical", "quality", "diagnostic")
    assert GATE_ACTIONS == {"critical": "page", "quality": "warn", "diagnostic": "monitor"}


def test_default_gate_metrics_are_all_produced_by_built_in_metrics() -> None:
    outputs = {
        o for name in available_metrics() for o in create_metric(name, **options_for(name)).outputs
    }
    assert GateSettings().unknown_metrics(outputs) == []
    assert GateSettings(critical=[{"metric": "typo", "min": 0.5}]).unknown_metrics(outputs) == [
        "typo"
    ]


def test_pass_fail_and_not_evaluated() -> None:
    outs = [_s("faithfulness", 0.9), _s("hallucination", 0.7), _s("answer_relevance", 0.59)]
    assert evaluate_gates(outs) == {"critical": True, "quality": False, "diagnostic": None}
    assert gate_failures(outs) == {
        "critical": [],
        "quality": ["answer_relevance 0.59 < 0.6"],
        "diagnostic": None,
    }


def test_one_failing_metric_fails_the_gate() -> None:
    outs = [_s("faithfulness", 0.95), _s("hallucination", 0.2)]
    assert evaluate_gates(outs)["critical"] is False


def test_skipped_and_judge_errors_are_not_evidence() -> None:
    outs = [
        MetricOutcome("faithfulness", "judge_error", reason="timeout"),
        MetricOutcome("hallucination", "skipped", reason="missing: context"),
        MetricOutcome("source_policy_usage", "skipped", reason="no quote_only or no_use chunk"),
    ]
    assert evaluate_gates(outs) == dict.fromkeys(GATES)
    assert evaluate_gates([*outs, _s("source_policy_usage", 0.0)])["critical"] is False


def test_custom_thresholds() -> None:
    settings = GateSettings.model_validate(
        {"quality": [{"metric": "answer_relevance", "min": 0.5}]}
    )
    assert evaluate_gates([_s("answer_relevance", 0.55)], settings)["quality"] is True
    assert settings.critical == GateSettings().critical  # other tiers keep their defaults


@pytest.mark.parametrize(
    "bad",
    [
        {"critical": [{"metric": "faithfulness", "min": 1.5}]},
        {"critical": [{"metric": "faithfulness"}]},
        {
            "critical": [
                {"metric": "faithfulness", "min": 0.5},
                {"metric": "faithfulness", "min": 0.6},
            ]
        },
        {"paging": []},
    ],
)
def test_invalid_settings_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        GateSettings.model_validate(bad)


def test_settings_parse_from_json_like_an_env_variable() -> None:
    raw = '{"diagnostic": [{"metric": "citation_coverage", "min": 0.8}]}'
    assert GateSettings.model_validate_json(raw).diagnostic[0].min == 0.8


class _Settings(BaseSettings):
    """Stands in for `Settings` with a `gates` section (same prefix rules)."""

    model_config = SettingsConfigDict(env_prefix="RAGPULSE_", env_nested_delimiter="__")
    gates: GateSettings = Field(default_factory=GateSettings)


def test_a_tier_from_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_GATES__CRITICAL", '[{"metric": "faithfulness", "min": 0.9}]')
    gates = _Settings().gates
    assert [(t.metric, t.min) for t in gates.critical] == [("faithfulness", 0.9)]
    assert gates.quality == GateSettings().quality
