"""Reports say which judge produced a score and whether it is calibrated; a regression
test never compares scores on two different scales, and calibration error is measured."""

from __future__ import annotations

from typing import Any

import pytest

from monitors.evaluation import (
    EventRecord,
    agreement,
    compare_reports,
    expected_calibration_error,
    metric_summary,
    parse_human,
    reliability,
)

EMB = "embedded-minilm-v1"


def _rec(i: int, score: float, judge: str, calibrated: bool) -> EventRecord:
    return EventRecord(
        f"e{i}",
        scores={"faithfulness": score},
        judges={"faithfulness": judge},
        calibrated=["faithfulness"] if calibrated else [],
    )


def _report(records: list[EventRecord]) -> dict[str, Any]:
    return {"created": "t", "events": [r.to_dict() for r in records]}


def test_records_round_trip_the_scale() -> None:
    rec = _rec(1, 0.9, EMB, True)
    again = EventRecord.from_dict(rec.to_dict())
    assert again.calibrated == ["faithfulness"]
    assert again.scale("faithfulness") == f"{EMB} (calibrated)"
    assert _rec(2, 0.9, "openai:gpt-4o", False).scale("faithfulness") == (
        "openai:gpt-4o (judge scale)"
    )
    assert EventRecord("e3", scores={"faithfulness": 0.5}).scale("faithfulness") is None


def test_metric_summary_names_judges_and_calibrated_counts() -> None:
    records = [_rec(i, 0.9, EMB, True) for i in range(3)] + [_rec(9, 0.4, "openai:x", False)]
    row = metric_summary(records)["faithfulness"]
    assert row["judges"] == {
        EMB: {"scored": 3, "calibrated": 3},
        "openai:x": {"scored": 1, "calibrated": 0},
    }


def test_scores_on_different_scales_are_not_tested_for_a_regression() -> None:
    raw = _report([_rec(i, 0.9, EMB, False) for i in range(30)])
    calibrated = _report([_rec(i, 0.2, EMB, True) for i in range(30)])
    row = compare_reports(calibrated, raw)["metrics"]["faithfulness"]
    assert row["status"] == "incomparable" and row["regressed"] is False
    assert row["scales"] == {
        "current": [f"{EMB} (calibrated)"],
        "baseline": [f"{EMB} (judge scale)"],
    }
    assert "p_value" not in row and row["delta"] == pytest.approx(-0.7)  # shown, not tested
    same = compare_reports(calibrated, calibrated)["metrics"]["faithfulness"]
    assert same["status"] == "tested"


def test_ece_and_reliability_by_hand() -> None:
    # bin [0.1, 0.2): scores 0.1, 0.1, labels 0, 1 -> |0.1 - 0.5| = 0.4, weight 2/4
    # bin [0.9, 1.0]: scores 0.9, 1.0, labels 1, 1 -> |0.95 - 1.0| = 0.05, weight 2/4
    scores, good = [0.1, 0.1, 0.9, 1.0], [False, True, True, True]
    assert expected_calibration_error(scores, good) == pytest.approx(0.225)
    bins = reliability(scores, good)
    assert len(bins) == 10 and bins[1]["n"] == 2 and bins[9]["n"] == 2
    assert bins[9]["mean_score"] == pytest.approx(0.95) and bins[0]["mean_score"] is None
    assert expected_calibration_error([], []) is None
    human = [parse_human(g) for g in good]
    row = agreement(scores, human, threshold=0.5)
    assert row["ece"] == pytest.approx(0.225) and row["reliability"][9]["good_share"] == 1.0
