"""`ragpulse_gate_results_total{gate,result}`: the countable gate outcomes of population turns
that the critical-gate alert reads (pass ratio and number of evaluations)."""

from __future__ import annotations

from exporters.judge_metrics import JudgeExporter, JudgeResult
from exporters.otel import OtelEvents
from exporters.prometheus import GATE_TIERS, PromFamilies
from monitors.metrics.base import MetricOutcome
from monitors.metrics.gates import GATES


def _value(m: PromFamilies, name: str, **labels: str) -> float | None:
    return m.registry.get_sample_value(name, labels)


def _result(reason: str, **gates: bool | None) -> JudgeResult:
    outcome = MetricOutcome("faithfulness", "scored", 0.9, judge="embedded-minilm-v1")
    return JudgeResult("e1", "it-support", [outcome], dict(gates), reason)


def test_every_tier_and_result_exists_at_zero_from_the_start() -> None:
    assert GATE_TIERS == GATES
    m = PromFamilies()
    for gate in GATES:
        for result in ("pass", "fail"):
            assert _value(m, "ragpulse_gate_results_total", gate=gate, result=result) == 0.0


def test_population_turns_are_counted_boosted_and_unevaluated_ones_are_not() -> None:
    m = PromFamilies()
    exporter = JudgeExporter("embedded-minilm-v1", m, OtelEvents(), {"1h": 3600.0}, lambda: 0.0)
    exporter.export("e1", _result("base", critical=True, quality=False, diagnostic=None))
    exporter.export("e2", _result("stratum", critical=False, quality=False))
    exporter.export("e3", _result("boost_detector", critical=False, quality=False))

    def count(gate: str, result: str) -> float | None:
        return _value(m, "ragpulse_gate_results_total", gate=gate, result=result)

    assert (count("critical", "pass"), count("critical", "fail")) == (1.0, 1.0)
    assert (count("quality", "pass"), count("quality", "fail")) == (0.0, 2.0)
    assert (count("diagnostic", "pass"), count("diagnostic", "fail")) == (0.0, 0.0)
    boosted = _value(
        m, "ragpulse_boosted_gate_results_total",
        gate="critical", reason="boost_detector", result="fail",
    )  # fmt: skip
    assert boosted == 1.0
    ratio = _value(m, "ragpulse_gate_pass_ratio", gate="critical", window="1h")
    assert ratio == 0.5  # the per-replica gauge over the same population turns


def test_scale_info_names_the_judge_and_whether_the_score_is_calibrated() -> None:
    m = PromFamilies()
    exporter = JudgeExporter("embedded-minilm-v1", m, OtelEvents(), {"1h": 3600.0}, lambda: 0.0)
    calibrated = MetricOutcome(
        "faithfulness", "scored", 0.9, judge="embedded-minilm-v1", calibrated=True, raw_score=0.5
    )
    llm = MetricOutcome("answer_relevance", "scored", 0.7, judge="gpt-4o-mini")
    failed = MetricOutcome(
        "context_relevance", "judge_error", judge="gpt-4o-mini", reason="timeout"
    )
    exporter.export("e1", JudgeResult("e1", "it-support", [calibrated, llm, failed], {}, "base"))
    info = "ragpulse_metric_scale_info"
    assert _value(m, info, metric="faithfulness", judge="embedded-minilm-v1", scale="calibrated")
    assert _value(m, info, metric="answer_relevance", judge="gpt-4o-mini", scale="judge") == 1.0
    assert _value(m, info, metric="faithfulness", judge="embedded-minilm-v1", scale="judge") is None
    assert _value(m, info, metric="context_relevance", judge="gpt-4o-mini", scale="judge") is None
