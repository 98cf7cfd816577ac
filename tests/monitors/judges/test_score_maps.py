"""Score maps: data breakpoints applied with numpy, pinned to the judge's raw scale, and
the calibrated outcome a metric reports with the embedded judge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from monitors.judges import embedded as emb
from monitors.judges.base import CalibratedJudge, SupportResult
from monitors.judges.score_maps import SCORE_MAPS_FORMAT, ScoreMap, load_score_maps
from monitors.metrics import create_metric
from monitors.metrics.base import severity
from tests.monitors.metrics.stubs import StubEmbedded, StubLLM, event, run

PACKAGED = Path(emb.__file__).with_name("embedded_score_maps.json")
CALIBRATED = ("faithfulness", "hallucination", "answer_relevance", "context_relevance")


def test_a_map_interpolates_between_breakpoints_and_is_flat_beyond() -> None:
    m = ScoreMap((0.2, 0.6), (0.3, 0.9))
    assert m(0.4) == pytest.approx(0.6)
    assert m(0.0) == 0.3 and m(1.0) == 0.9
    assert np.allclose(m.apply([0.2, 0.4, 0.6]), [0.3, 0.6, 0.9])


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        ((0.0,), (0.5,), "at least 2"),
        ((0.0, 1.5), (0.1, 0.2), r"in \[0, 1\]"),
        ((0.5, 0.5), (0.1, 0.2), "strictly increasing"),
        ((0.0, 1.0), (0.6, 0.4), "non-decreasing"),
    ],
)
def test_bad_maps_are_value_errors(x: tuple[float, ...], y: tuple[float, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ScoreMap(x, y)


def test_the_packaged_maps_are_pinned_to_the_packaged_calibration() -> None:
    data = json.loads(PACKAGED.read_text())
    assert data["format"] == SCORE_MAPS_FORMAT and "developer split" in data["note"]
    assert data["raw_scale"]["calibration_sha256"] == emb.calibration_sha256()
    maps = load_score_maps(calibration_sha256=emb.calibration_sha256())
    assert set(maps.maps) == set(CALIBRATED)
    assert maps.maps["hallucination"] is maps.maps["faithfulness"]  # the same support score
    assert set(maps.uncalibrated or {}) >= {"citation_accuracy", "source_policy_usage"}
    grid = np.linspace(0, 1, 1001)
    for name in CALIBRATED:
        y = maps.maps[name].apply(grid)
        assert np.all(np.diff(y) > 0), name  # strictly increasing: the ranking is kept


def test_a_map_fitted_on_another_raw_scale_is_refused(tmp_path: Path) -> None:
    data = json.loads(PACKAGED.read_text())
    data["raw_scale"]["calibration_sha256"] = "0" * 64
    stale = tmp_path / "maps.json"
    stale.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="refit"):
        load_score_maps(stale, calibration_sha256=emb.calibration_sha256())
    with pytest.raises(ValueError, match="score_maps"):
        emb.MiniLMJudge(score_maps=stale)
    assert emb.MiniLMJudge(score_maps=False).calibrate("faithfulness", 0.5) is None


def test_the_judge_calibrates_only_metrics_with_a_map() -> None:
    judge = emb.MiniLMJudge()  # loads no model
    assert isinstance(judge, CalibratedJudge)
    assert judge.calibrate("citation_accuracy", 0.4) is None
    assert judge.calibrate("source_policy_usage", 0.4) is None
    low, mid, high = (judge.calibrate("faithfulness", v) for v in (0.05, 0.5, 0.9))
    assert low is not None and mid is not None and high is not None
    assert 0.0 < low < mid < high < 1.0


class CalibratedStub(StubEmbedded):
    """The stub judge with a score map on faithfulness only: raw s -> (1 + s) / 2."""

    def calibrate(self, metric: str, raw: float) -> float | None:
        return (1.0 + raw) / 2.0 if metric == "faithfulness" else None

    def support(
        self, text: str, contexts: Sequence[str], known: Sequence[str] = ()
    ) -> SupportResult:
        super().support(text, contexts, known)
        return SupportResult(0.4, [(text, 0.4)], "overlap 0.40")


def test_metrics_report_the_calibrated_score_and_keep_the_raw_one() -> None:
    [out] = run(create_metric("faithfulness")(event(), CalibratedStub()))
    assert out.status == "scored" and out.calibrated
    assert out.score == pytest.approx(0.7) and out.raw_score == pytest.approx(0.4)
    card = out.to_dict()
    assert card["judge"] == "stub-embedded" and card["calibrated"] is True
    assert card["raw_score"] == 0.4 and card["severity"] == severity(0.7) == "minor"
    [rel] = run(create_metric("answer_relevance")(event(), CalibratedStub()))
    assert not rel.calibrated and rel.raw_score is None  # no map: the raw score stands
    assert rel.to_dict()["calibrated"] is False and "raw_score" not in rel.to_dict()


class ChunkStub(StubEmbedded):
    """Relevance 0.9 and 0.1 for two chunks; the map: on topic (1) from 0.5 up."""

    def relevance(self, query: str, texts: Sequence[str]) -> list[float]:
        return [0.9, 0.1][: len(texts)]

    def calibrate(self, metric: str, raw: float) -> float | None:
        return float(raw >= 0.5) if metric == "context_relevance" else None


def test_context_relevance_maps_each_chunk_then_averages() -> None:
    [out] = run(create_metric("context_relevance")(event(), ChunkStub()))
    # per chunk: 1 and 0 -> 0.5 (the share of on-topic chunks); the map of the raw
    # mean (0.5) would have said 1.0
    assert out.calibrated and out.score == pytest.approx(0.5)
    assert out.raw_score == pytest.approx(0.5)
    assert "kb-1=1.00" in out.justification and "kb-2=0.00" in out.justification


def test_llm_scores_say_they_are_not_calibrated() -> None:
    reply = {"justification": "on topic", "score": 0.8}
    [out] = run(create_metric("answer_relevance")(event(), StubLLM(reply)))
    assert out.to_dict()["calibrated"] is False and out.judge == "stub-llm"


def test_the_gate_floors_are_on_the_scale_the_metrics_report() -> None:
    floors = json.loads(PACKAGED.with_name("embedded_gate_floors.json").read_text())
    maps = load_score_maps(calibration_sha256=emb.calibration_sha256())
    assert floors["score_maps_version"] == maps.version
    for metric, scale in floors["scale"].items():
        assert (scale == "calibrated") == (metric in maps.maps), metric
