from __future__ import annotations

import json

import pytest

from exporters import PromFamilies
from stream.runtime.pipeline import Dedupe, Pipeline
from stream.runtime.settings import ConfigError, Settings, load_settings


def _raw(event_id: str, response: str = "Revenue was $2.1B.") -> bytes:
    return json.dumps(
        {
            "event_id": event_id,
            "query": "What was revenue?",
            "response": response,
            "service": "earnings-qa",
            "prompt_version": "v1",
            "tenant_tier": "gold",
        }
    ).encode()


def test_scorecard_shape_and_pass_through() -> None:
    result = Pipeline(load_settings()).process(_raw("e1"))
    assert result.outcome == "scored"
    card = result.scorecard
    assert card is not None
    assert card["event_id"] == "e1"
    assert card["detections"] == [] and card["failure_modes"] == []
    assert card["metrics"] == {} and card["sampled"] is False
    assert card["service"] == "earnings-qa"
    assert card["extra"] == {"tenant_tier": "gold"}
    assert json.loads(result.scorecard_bytes()) == card


def test_detections_become_failure_modes_and_metrics() -> None:
    metrics = PromFamilies()
    pipeline = Pipeline(load_settings(), metrics)
    cut = "As of my knowledge cutoff in 2023, I don't have real-time data on that."
    result = pipeline.process(_raw("e2", cut))
    assert result.scorecard is not None
    assert "training_cutoff_excuse" in result.scorecard["failure_modes"]
    value = metrics.registry.get_sample_value
    assert value("ragpulse_events_total", {"outcome": "scored"}) == 1
    assert (
        value(
            "ragpulse_failure_modes_total",
            {
                "failure_mode": "training_cutoff_excuse",
                "service": "earnings-qa",
                "prompt_version": "v1",
            },
        )
        == 1
    )
    # every declared category exists from the start at 0
    assert value("ragpulse_detector_hits_total", {"detector": "pii", "category": "email"}) == 0


def test_invalid_and_duplicate_outcomes() -> None:
    metrics = PromFamilies()
    pipeline = Pipeline(load_settings(), metrics)
    assert pipeline.process(b"{oops").reason == "invalid_json"
    assert pipeline.process(_raw("same")).outcome == "scored"
    assert pipeline.process(_raw("same")).outcome == "duplicate"
    value = metrics.registry.get_sample_value
    assert value("ragpulse_events_total", {"outcome": "consumed"}) == 3
    assert value("ragpulse_events_total", {"outcome": "duplicate"}) == 1
    assert value("ragpulse_invalid_events_total", {"reason": "invalid_json"}) == 1


def test_dedupe_window_is_bounded() -> None:
    d = Dedupe(2)
    assert [d.seen(x) for x in ["a", "b", "a", "c", "b", "a"]] == [
        False,
        False,
        True,
        False,
        False,
        False,
    ]
    assert len(d._ids) == 2
    assert Dedupe(0).seen("a") is False and Dedupe(0).seen("a") is False


def test_bad_detector_config_fails_at_start_naming_it() -> None:
    with pytest.raises(ConfigError, match="unknown detector 'nope'"):
        Pipeline(Settings(detectors={"enabled": ["nope"]}))
    with pytest.raises(ConfigError, match=r"detectors\.enabled\.1 \(pii\): .*bogus"):
        Pipeline(Settings(detectors={"enabled": ["refusal", {"type": "pii", "bogus": 1}]}))
    # the deprecated options map: still read for a release, with a warning
    with (
        pytest.warns(FutureWarning, match="detectors.options is deprecated"),
        pytest.raises(ValueError, match="not enabled"),
    ):
        Settings(detectors={"enabled": ["pii"], "options": {"refusal": {}}})
    with pytest.warns(FutureWarning, match="detectors.options is deprecated"):
        old = Settings(detectors={"enabled": ["pii"], "options": {"pii": {"bogus": 1}}})
    assert old.detectors.enabled[0].options == {"bogus": 1}
    with pytest.raises(ConfigError, match=r"detectors\.enabled\.0 \(pii\): .*bogus"):
        Pipeline(old)


def test_a_failing_detector_is_counted_and_the_others_still_run() -> None:
    from detectors import Detection, Detector, register_detector

    @register_detector("test_boom")
    class Boom(Detector):
        name = "test_boom"
        categories = ("boom",)  # type: ignore[assignment]

        def detect(self, event: object, scan: object) -> list[Detection]:  # type: ignore[override]
            raise RuntimeError("bug")

    metrics = PromFamilies()
    pipeline = Pipeline(Settings(detectors={"enabled": ["test_boom", "pii"]}), metrics)
    result = pipeline.process(_raw("e9", "mail me: jane.doe@example.com"))
    assert result.scorecard is not None
    assert result.scorecard["detector_errors"] == ["test_boom"]
    assert result.scorecard["failure_modes"] == ["pii_leak"]
    value = metrics.registry.get_sample_value
    assert value("ragpulse_detector_errors_total", {"detector": "test_boom"}) == 1


def test_escaped_lone_surrogate_is_invalid_not_a_crash() -> None:
    raw = _raw("e10", "x \ud800 y")  # json.dumps escapes it as \\ud800
    assert b"\\ud800" in raw
    result = Pipeline(load_settings()).process(raw)
    assert result.outcome == "invalid" and result.reason == "invalid_utf8"


def test_plugin_modules_register_detectors(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "my_detectors.py").write_text(
        "from detectors import Detection, Detector, register_detector\n"
        "@register_detector('shouting')\n"
        "class Shouting(Detector):\n"
        "    name = 'shouting'\n"
        "    categories = ('caps',)\n"
        "    def detect(self, event, scan):\n"
        "        hit = [Detection('shouting', 'caps', 'ALL CAPS')]\n"
        "        return hit if event.response.isupper() else []\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = Settings(detectors={"enabled": ["shouting"], "plugins": ["my_detectors"]})
    result = Pipeline(settings).process(_raw("p1", "NO."))
    assert result.scorecard is not None
    assert result.scorecard["detections"][0]["category"] == "caps"
    with pytest.raises(ConfigError, match="cannot import 'nope_mod'"):
        Pipeline(Settings(detectors={"plugins": ["nope_mod"]}))
