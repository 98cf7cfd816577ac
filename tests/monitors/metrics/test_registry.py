"""The built-in metrics are registered, declare inputs and outputs, and reject bad options."""

from __future__ import annotations

import pytest

from monitors.metrics import INPUTS, JudgeMetric, available_metrics, create_metric
from monitors.metrics.case_aware import CRITERIA
from tests.monitors.metrics.stubs import event, run

OUTPUTS = {
    "faithfulness": ("faithfulness",),
    "context_relevance": ("context_relevance",),
    "answer_relevance": ("answer_relevance",),
    "case_aware": (*CRITERIA, "s_final"),
    "citation_accuracy": ("citation_accuracy",),
    "citation_coverage": ("citation_coverage",),
    "source_policy_usage": ("source_policy_usage",),
    "rag_triad": ("faithfulness", "context_relevance", "answer_relevance"),
    "citation_policy": ("citation_accuracy", "source_policy_usage"),
}


def test_built_ins_registered_with_inputs_and_outputs() -> None:
    assert set(OUTPUTS) <= set(available_metrics())
    for name, outputs in OUTPUTS.items():
        metric = create_metric(name)
        assert isinstance(metric, JudgeMetric)
        assert metric.name == name and metric.outputs == outputs
        assert metric.needs and metric.needs <= set(INPUTS)


def test_bad_options_name_the_metric() -> None:
    with pytest.raises(ValueError, match="faithfulness"):
        create_metric("faithfulness", temperature=0.3)
    with pytest.raises(ValueError):
        create_metric("faithfulness", limits={"max_chunks": 0})
    with pytest.raises(ValueError, match="no prompt faithfulness/v7"):
        create_metric("faithfulness", prompt_version="v7")


def test_a_judge_of_neither_kind_is_a_type_error() -> None:
    class NotAJudge:
        name = "nope"

    with pytest.raises(TypeError, match="neither"):
        run(create_metric("answer_relevance")(event(), NotAJudge()))  # type: ignore[arg-type]
