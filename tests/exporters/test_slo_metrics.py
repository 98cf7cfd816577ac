"""`ragpulse_slo_events_total{slo, service, prompt_version, outcome}` counted on the real
pipeline and judge exporter, and the `slos` settings: bad ones fail at start naming the
field and its environment variable."""

from __future__ import annotations

import json
from typing import Any

import pytest

from exporters.judge_metrics import JudgeExporter, JudgeResult
from exporters.otel import OtelEvents
from exporters.prometheus import PromFamilies
from monitors.metrics.base import MetricOutcome
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import ConfigError, load_settings

SLOS: list[dict[str, Any]] = [
    {"name": "pii-free", "sli": "failure_free", "objective": 0.99, "failure_modes": ["pii_leak"]},
    {"name": "it-cutoff", "sli": "failure_free", "objective": 0.95, "services": ["it-support"],
     "failure_modes": ["training_cutoff_excuse"]},
    {"name": "valid", "sli": "valid_events", "objective": 0.99},
    {"name": "gate", "sli": "judge_pass", "objective": 0.9, "gate": "critical"},
    {"name": "canary", "sli": "reference_correct", "objective": 0.8, "floor": 0.5},
]  # fmt: skip


def count(m: PromFamilies, slo: str, outcome: str, service: str, prompt: str = "v1") -> float:
    labels = {"slo": slo, "service": service, "prompt_version": prompt, "outcome": outcome}
    return m.registry.get_sample_value("ragpulse_slo_events_total", labels) or 0.0


def event(i: int, service: str, response: str) -> bytes:
    body = {
        "event_id": f"e{i}", "service": service, "prompt_version": "v1", "query": "Why?",
        "response": response, "retrieved_contexts": [{"id": "c1", "text": "The sky is blue."}],
    }  # fmt: skip
    return json.dumps(body).encode()


CUTOFF = "I don't know, my training data only goes up to 2021 so I cannot say."


def test_failure_free_and_valid_events_on_the_pipeline() -> None:
    m = PromFamilies()
    pipeline = Pipeline(load_settings(slos=SLOS), m)
    outcomes = [
        pipeline.process(event(1, "it-support", "The sky is blue [c1].")).outcome,
        pipeline.process(event(2, "it-support", CUTOFF)).outcome,
        pipeline.process(event(3, "earnings-qa", CUTOFF)).outcome,
        pipeline.process(event(1, "it-support", "again")).outcome,  # duplicate
        pipeline.process(b"{not json").outcome,
    ]
    assert outcomes == ["scored", "scored", "scored", "duplicate", "invalid"]
    # no PII anywhere: three good turns, each under its own service
    assert count(m, "pii-free", "good", "it-support") == 2.0
    assert count(m, "pii-free", "good", "earnings-qa") == 1.0
    assert count(m, "pii-free", "bad", "it-support") == 0.0  # exists from the first event
    # the selector: only it-support turns count, and the cutoff excuse is bad
    assert (
        count(m, "it-cutoff", "good", "it-support"),
        count(m, "it-cutoff", "bad", "it-support"),
    ) == (1.0, 1.0)
    assert count(m, "it-cutoff", "bad", "earnings-qa") == 0.0
    # scored and duplicate are valid, the dead-lettered message is not
    assert count(m, "valid", "good", "all", "all") == 4.0
    assert count(m, "valid", "bad", "all", "all") == 1.0


def test_judge_pass_counts_population_turns_and_reference_correct_reference_turns() -> None:
    m = PromFamilies()
    m.declare_slos(load_settings(slos=SLOS).slos)
    exporter = JudgeExporter("j", m, OtelEvents(), {"1h": 3600.0}, lambda: 0.0)
    ok = MetricOutcome("faithfulness", "scored", 0.9, judge="j")

    def judged(reason: str, gates: dict[str, bool | None], *outcomes: MetricOutcome) -> None:
        result = JudgeResult("e", "it-support", [ok, *outcomes], gates, reason)
        result.prompt_version = "v1"
        exporter.export("e", result)

    judged("base", {"critical": True})
    judged("stratum", {"critical": False})
    judged("boost_detector", {"critical": False})  # boosted: never counts
    judged("base", {"critical": None})  # not evaluated: no verdict
    right = MetricOutcome("answer_correctness", "scored", 0.8, judge="j", reference_based=True)
    wrong = MetricOutcome("answer_correctness", "scored", 0.2, judge="j", reference_based=True)
    failed = MetricOutcome("answer_correctness", "judge_error", judge="j", reason="timeout")
    judged("reference", {"critical": False}, right)
    judged("reference", {}, wrong)
    judged("reference", {}, failed)  # a judge error is not a verdict
    assert (count(m, "gate", "good", "it-support"), count(m, "gate", "bad", "it-support")) == (
        1.0,
        1.0,
    )
    assert (count(m, "canary", "good", "it-support"), count(m, "canary", "bad", "it-support")) == (
        1.0,
        1.0,
    )


@pytest.mark.parametrize(
    ("slos", "message"),
    [
        ([{"name": "x", "sli": "failure_free", "objective": 0.99}],
         "slos.0.failure_modes (RAGPULSE_SLOS__0__FAILURE_MODES): Value error, failure_free needs"),
        ([{"name": "x", "sli": "failure_free", "objective": 0.99, "failure_modes": ["pii"]}],
         "slos.0.failure_modes (RAGPULSE_SLOS__0__FAILURE_MODES): Value error, unknown"),
        ([{"name": "x", "sli": "judge_pass", "objective": 0.9, "failure_modes": ["pii_leak"]}],
         "failure_modes apply to sli failure_free, not judge_pass"),
        ([{"name": "x", "sli": "latency", "objective": 0.99}], "slos.0.sli"),
        ([{"name": "x", "sli": "valid_events", "objective": 1.0}], "slos.0.objective"),
        ([{"name": "X Y", "sli": "valid_events", "objective": 0.9}], "slos.0.name"),
        ([{"name": "x", "sli": "valid_events", "objective": 0.9, "services": ["a"]}],
         "slos.0.services (RAGPULSE_SLOS__0__SERVICES): Value error, valid_events counts"),
        ([{"name": "x", "sli": "valid_events", "objective": 0.9, "period": "30m"}],
         "slos.0.period (RAGPULSE_SLOS__0__PERIOD): Value error, period shorter than 1h"),
        ([{"name": "x", "sli": "valid_events", "objective": 0.9, "period": "1d"}],
         "slos.0.period 1d is shorter than the 3d window of alerts.slo_burn.windows"),
        ([{"name": "x", "sli": "valid_events", "objective": 0.9}] * 2, "SLO names must be unique"),
        ([{"name": "x", "sli": "valid_events", "objective": 0.9, "typo": 1}], "slos.0.typo"),
    ],
)  # fmt: skip
def test_bad_slos_fail_at_start_naming_the_field(slos: list[Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(slos=slos)
    assert message in str(info.value)


@pytest.mark.parametrize("label", ["service", "slo", "long_window", "severity", "namespace"])
def test_static_alert_labels_cannot_overwrite_the_labels_alerts_carry(label: str) -> None:
    with pytest.raises(ConfigError, match=rf"alerts\.labels .*\['{label}'\] are set by ragpulse"):
        load_settings(alerts={"labels": {label: "x"}})
    assert load_settings(alerts={"labels": {"team": "rag"}}).alerts.labels == {"team": "rag"}


def test_a_turn_a_detector_crashed_on_is_neither_good_nor_bad_and_judge_pairs_start_at_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = PromFamilies()
    pipeline = Pipeline(load_settings(slos=SLOS), m)
    pii = next(d for d in pipeline.detectors if d.name == "pii")

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("detector bug")

    monkeypatch.setattr(pii, "detect", crash)
    assert pipeline.process(event(1, "it-support", "The sky is blue [c1].")).outcome == "scored"
    assert pipeline.process(event(2, "it-support", CUTOFF)).outcome == "scored"
    assert (
        count(m, "pii-free", "good", "it-support"),
        count(m, "pii-free", "bad", "it-support"),
    ) == (0.0, 0.0)
    # a mode another detector found still makes the turn bad
    assert count(m, "it-cutoff", "bad", "it-support") == 1.0
    labels = {"slo": "gate", "service": "it-support", "prompt_version": "v1", "outcome": "bad"}
    assert m.registry.get_sample_value("ragpulse_slo_events_total", labels) == 0.0


def test_slos_from_the_environment_and_the_burn_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_SLOS", json.dumps(SLOS[2:3]))
    monkeypatch.setenv("RAGPULSE_ALERTS__SLO_BURN__TIME_SCALE", "0.5")
    settings = load_settings()
    assert [s.name for s in settings.slos] == ["valid"]
    assert settings.alerts.slo_burn.time_scale == 0.5
    windows = [{"severity": "page", "budget_consumed": 0.02, "long": "5m", "short": "1h"}]
    monkeypatch.setenv("RAGPULSE_ALERTS__SLO_BURN__WINDOWS", json.dumps(windows))
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "alerts.slo_burn.windows.0" in str(info.value) and "shorter than long" in str(info.value)


def test_a_reference_slo_needs_a_reference_score_of_the_enabled_metrics(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from stream.runtime.judging_build import build_judging

    narrowed = {"backend": "embedded", "metrics": ["faithfulness"]}
    canary = [SLOS[4]]
    with pytest.raises(ConfigError, match=r"slos\.0\.metric: 'answer_correctness' is not"):
        build_judging(load_settings(judge=narrowed, slos=canary))
    # the defaults only warn: narrowing judge.metrics must not stop a sidecar
    assert build_judging(load_settings(judge=narrowed)) is not None
    assert "the default SLO canary-correct counts no events" in caplog.text
    assert build_judging(load_settings(judge={"backend": "embedded"}, slos=canary)) is not None
