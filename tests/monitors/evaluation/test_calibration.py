"""Agreement maths on small cases computed by hand."""

from __future__ import annotations

import pytest

from monitors.evaluation import BAND_MIDPOINTS, agreement, build_calibration, parse_human
from monitors.evaluation.calibration import HumanLabel, panel_agreement


def test_parse_human_accepts_numbers_bools_and_bands() -> None:
    assert parse_human(True) == HumanLabel("bool", 1.0, None)
    assert parse_human(False).value == 0.0
    assert parse_human(0.42) == HumanLabel("number", 0.42, "moderate")
    assert parse_human("Minor") == HumanLabel("band", BAND_MIDPOINTS["minor"], "minor")
    for bad in (1.5, -0.1, "awful", None, float("nan")):
        with pytest.raises(ValueError):
            parse_human(bad)


def test_binary_kappa_accuracy_and_confusion() -> None:
    # judge good at >= 0.5: T T F F F T T F; human: T T T F F F T F
    # agreement 6/8 = 0.75; both marginals 4/8 good so p_e = 0.5; kappa = 0.25 / 0.5 = 0.5
    human = [parse_human(v) for v in (True, True, True, False, False, False, True, False)]
    judge = [0.9, 0.8, 0.3, 0.2, 0.1, 0.7, 0.6, 0.4]
    r = agreement(judge, human, threshold=0.5)
    assert r["kappa_binary"] == pytest.approx(0.5)
    assert r["kappa_kind"] == "binary" and r["kappa"] == pytest.approx(0.5)
    assert r["accuracy"] == pytest.approx(0.75)
    assert r["confusion_binary"] == {
        "both_good": 3, "human_good_judge_bad": 1, "human_bad_judge_good": 1, "both_bad": 3,
    }  # fmt: skip
    assert r["graded_n"] == 0 and r["kappa_bands"] is None and r["mae"] is None


def test_band_kappa_weighted_kappa_and_mae() -> None:
    # human bands severe, moderate, minor, none; judge bands severe, moderate, moderate, none
    # p_o = 3/4; judge marginals 1/4, 1/2, 0, 1/4 so p_e = 1/4; kappa = (3/4 - 1/4) / (3/4)
    # linear weights: observed disagreement 1/4 * 1, expected 5/4 * 1/4 -> 1 - 0.25/1.25 = 0.8
    human = [parse_human(b) for b in ("severe", "moderate", "minor", "none")]
    judge = [0.1, 0.5, 0.5, 0.95]
    r = agreement(judge, human, threshold=0.5)
    assert r["kappa_bands"] == pytest.approx(2 / 3)
    assert r["kappa_bands_linear"] == pytest.approx(0.8)
    assert r["kappa_kind"] == "bands_linear" and r["kappa"] == pytest.approx(0.8)
    assert r["accuracy_bands"] == pytest.approx(0.75)
    assert r["mae"] == pytest.approx((0.05 + 0.045 + 0.23 + 0.02) / 4)
    assert r["confusion_bands"][2] == [0, 1, 0, 0]  # human minor, judge moderate
    assert r["spearman"]["r"] == pytest.approx(0.9486833, abs=1e-6)  # ties in the judge


def test_undefined_statistics_are_none_not_nan() -> None:
    human = [parse_human(True), parse_human(True)]
    r = agreement([0.9, 0.9], human, threshold=0.5)
    assert r["pearson"] is None and r["spearman"] is None
    assert r["kappa_binary"] is None  # both raters use one label: kappa is 0/0
    assert r["accuracy"] == 1.0


def test_calibration_flags_metrics_below_target_and_compares_judges() -> None:
    human = {
        f"e{i}": {"faithfulness": parse_human(i % 2 == 0), "answer_relevance": parse_human(0.9)}
        for i in range(6)
    }
    perfect = {f"e{i}": {"faithfulness": 0.9 if i % 2 == 0 else 0.1} for i in range(6)}
    inverted = {f"e{i}": {"faithfulness": 0.1 if i % 2 == 0 else 0.9} for i in range(6)}
    report = build_calibration(
        human, [("a", perfect), ("b", inverted)], {"faithfulness": 0.7}, kappa_target=0.8
    )
    rows = report["metrics"]["faithfulness"]
    assert rows["a"]["kappa"] == pytest.approx(1.0) and not rows["a"]["below_target"]
    assert rows["b"]["kappa"] == pytest.approx(-1.0) and rows["b"]["below_target"]
    assert rows["a"]["threshold"] == 0.7
    # answer_relevance was labelled but never scored: flagged, and counted as unscored
    assert report["metrics"]["answer_relevance"]["a"]["unscored"] == 6
    flagged = {(f["metric"], f["judge"]) for f in report["flagged"]}
    assert flagged == {("faithfulness", "b"), ("answer_relevance", "a"), ("answer_relevance", "b")}
    panel = report["panel"]["metrics"]["faithfulness"]
    assert panel["n"] == 6 and panel["kappa_binary"] == pytest.approx(-1.0)


def test_panel_agreement_of_identical_judges_is_perfect() -> None:
    scores = [0.1, 0.4, 0.7, 0.95, 0.2]
    r = panel_agreement(scores, scores, threshold=0.5)
    assert r["kappa_binary"] == pytest.approx(1.0)
    assert r["kappa_bands"] == pytest.approx(1.0)
    assert r["pearson"]["r"] == pytest.approx(1.0) and r["mae"] == 0.0
