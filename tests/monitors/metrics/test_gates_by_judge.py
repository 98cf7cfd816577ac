"""Per-judge gate floors: `min` is the LLM judge's floor, `min_by_judge` overrides it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from monitors.metrics.base import MetricOutcome
from monitors.metrics.gates import GateSettings, Threshold, embedded_floors, evaluate_gates

EMB = "embedded-minilm-v1"


def _s(metric: str, score: float, judge: str) -> MetricOutcome:
    return MetricOutcome(metric, "scored", score, judge=judge)


def test_the_embedded_judge_is_held_to_its_own_fitted_floor() -> None:
    floors = embedded_floors()
    # the embedded floor is on its calibrated scale (P(fine), fitted on dev), below the
    # LLM judge's 0.7
    assert floors["faithfulness"] < 0.7
    score = floors["faithfulness"] + 0.05  # passes the embedded floor, not the LLM one
    assert evaluate_gates([_s("faithfulness", score, EMB)])["critical"] is True
    assert evaluate_gates([_s("faithfulness", score, "openai:gpt-4.1")])["critical"] is False
    below = floors["faithfulness"] - 0.01
    assert evaluate_gates([_s("faithfulness", below, EMB)])["critical"] is False


def test_defaults_come_from_the_fitted_data_file() -> None:
    path = Path(__file__).resolve().parents[3] / "monitors/judges/embedded_gate_floors.json"
    data = json.loads(path.read_text())
    assert "developer split" in data["note"]
    tiers = GateSettings().tiers()
    by_metric = {t.metric: t for ts in tiers.values() for t in ts}
    for metric, floor in data["floors"].items():
        assert by_metric[metric].min_by_judge == {EMB: floor}
    assert by_metric["faithfulness"].min == 0.7  # the LLM floor is unchanged


def test_globs_and_exact_names() -> None:
    t = Threshold(metric="faithfulness", min=0.7, min_by_judge={"openai:*": 0.6, "x": 0.1})
    assert t.floor("openai:gpt-4.1") == 0.6
    assert t.floor("x") == 0.1
    assert t.floor("embedded-minilm-v1") == 0.7
    assert t.floor(None) == 0.7
    settings = GateSettings.model_validate({"critical": [t.model_dump()]})
    outs = [_s("faithfulness", 0.65, "openai:gpt-4.1")]
    assert evaluate_gates(outs, settings)["critical"] is True


def test_floors_must_be_ratios() -> None:
    with pytest.raises(ValidationError, match="min_by_judge"):
        Threshold(metric="faithfulness", min=0.7, min_by_judge={"x": 1.5})
