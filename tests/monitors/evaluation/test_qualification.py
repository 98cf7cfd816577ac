"""Metric qualification maths: Cohen's d, the rewrite variance ratio, RMAD across groups,
the deterministic rewrites and the report (`monitors.evaluation.qualification`)."""

from __future__ import annotations

import math
import random

import pytest

from exporters.reports import render_report, report_kind
from monitors.evaluation.qualification import (
    QUALIFICATION_FORMAT,
    build_qualification,
    cohens_d,
    group_effects,
    rmad,
    variance_ratio,
)
from monitors.evaluation.rewrites import KINDS, rewrite_id, rewrites_of, split_rewrite_id


def test_cohens_d_on_known_numbers() -> None:
    # means 5 and 2; variances 20/3 and 1; pooled (3·20/3 + 2·1) / 5 = 4.4
    assert cohens_d([2, 4, 6, 8], [1, 2, 3]) == pytest.approx(3 / math.sqrt(4.4))
    assert cohens_d([1, 2, 3], [4, 5, 6]) == pytest.approx(-3.0)
    assert math.isnan(cohens_d([1.0], [0.0, 1.0]))  # fewer than 2 on a side
    assert cohens_d([1, 1], [0, 0]) == math.inf  # separated without spread


def test_variance_ratio_is_the_ratio_of_population_variances() -> None:
    assert variance_ratio([0, 1], [0, 2]) == pytest.approx(4.0)
    assert math.isnan(variance_ratio([0.5, 0.5], [0.1, 0.9]))


def _labelled(n: int = 20, seed: int = 1) -> tuple[dict[str, tuple[bool, str]], dict]:
    """n good and n bad events in two services; 'sharp' separates them, 'flat' not."""
    rng = random.Random(seed)
    labelled: dict[str, tuple[bool, str]] = {}
    scores: dict[str, dict[str, float]] = {}
    for i in range(2 * n):
        good = i % 2 == 0
        labelled[f"e{i}"] = (good, "a" if i < n else "b")
        base = 0.8 if good else 0.3
        scores[f"e{i}"] = {"sharp": base + rng.gauss(0, 0.1), "flat": rng.random()}
    return labelled, scores


def test_vr_is_one_when_rewrites_copy_the_scores_and_large_when_noisy() -> None:
    labelled, scores = _labelled()
    copied = dict(scores)
    noisy = dict(scores)
    rng = random.Random(7)
    for i, (good, _) in labelled.items():
        if good:
            for k in (1, 2):
                copied[rewrite_id(i, k)] = dict(scores[i])
                noisy[rewrite_id(i, k)] = {m: s + rng.gauss(0, 0.5) for m, s in scores[i].items()}
    same = build_qualification(labelled, copied)["metrics"]["sharp"]
    assert same["variance_ratio"] == pytest.approx(1.0)
    assert same["rewrites"]["n_changed"] == 40 and same["rewrites"]["mean_abs_change"] == 0
    assert same["qualified"] is True and same["reasons"] == []
    loud = build_qualification(labelled, noisy)["metrics"]["sharp"]
    assert loud["variance_ratio"] > 5
    assert loud["qualified"] is False and loud["reasons"][0].startswith("VR ")


def test_without_rewrite_scores_vr_is_null_with_the_reason_and_not_qualified() -> None:
    labelled, scores = _labelled()
    report = build_qualification(labelled, scores, no_rewrites="write them", extra={"x": 1})
    assert report["format"] == QUALIFICATION_FORMAT and report["x"] == 1
    sharp, flat = report["metrics"]["sharp"], report["metrics"]["flat"]
    assert sharp["cohens_d"] > 3 and abs(flat["cohens_d"]) < 1
    assert (sharp["n_good"], sharp["n_bad"]) == (20, 20)
    assert sharp["variance_ratio"] is None and sharp["vr_reason"] == "write them"
    assert sharp["qualified"] is False and "VR unknown: write them" in sharp["reasons"]
    assert report["thresholds"] == {"min_d": 0.4, "max_vr": 1.2, "min_per_group": 3}


def test_a_weak_metric_fails_on_d_with_a_custom_threshold() -> None:
    labelled, scores = _labelled()
    for i in list(labelled):
        scores[rewrite_id(i, 1)] = dict(scores[i])
    report = build_qualification(labelled, scores, min_d=10.0)
    assert report["metrics"]["sharp"]["qualified"] is False
    assert report["metrics"]["sharp"]["reasons"][0].startswith("d ")


def test_rmad_on_constructed_groups() -> None:
    rows = []
    for group, shift in (("x", 1.0), ("y", 2.0), ("z", 3.0)):  # d = 1, 2, 3 (unit SDs)
        rows += [(v + shift, True, group) for v in (0.0, 1.0, 2.0)]
        rows += [(v, False, group) for v in (0.0, 1.0, 2.0)]
    rows += [(1.0, True, "small"), (0.0, False, "small")]  # too few: listed, not counted
    out = group_effects(rows)
    assert [out["groups"][g]["cohens_d"] for g in ("x", "y", "z")] == pytest.approx([1, 2, 3])
    assert out["groups"]["small"] == {"n_good": 1, "n_bad": 1, "cohens_d": None}
    # mean d 2, mean |d - 2| = 2/3
    assert out["rmad"] == pytest.approx(1 / 3, abs=1e-6) and out["rmad_reason"] is None
    one = group_effects([r for r in rows if r[2] in ("x", "small")])
    assert one["rmad"] is None and "1 group(s)" in one["rmad_reason"]
    assert rmad([1.0, -1.0]) is None  # mean d 0


def test_rewrites_supplied_or_generated_keep_stable_numbers() -> None:
    text = "However, many people use it. It is quick."
    generated = rewrites_of(text)
    assert [k for k, _ in generated] == [1, 2, 3] and len(KINDS) == 3
    assert rewrites_of(text) == generated  # deterministic
    supplied = rewrites_of(text, [text, "Many people use it, quickly.", "It is quick."], limit=2)
    assert supplied == [(2, "Many people use it, quickly.")]  # unchanged one left out
    assert rewrites_of("Delhi") == []
    assert split_rewrite_id(rewrite_id("evt~1", 12)) == ("evt~1", 12)
    assert split_rewrite_id("evt-1") is None and split_rewrite_id("e~rwx") is None


def test_the_report_renders_as_json_and_markdown() -> None:
    labelled, scores = _labelled()
    report = build_qualification(labelled, scores, extra={"input": "f", "judge": "j"})
    assert report_kind(report) == "qualification"
    assert '"format": "ragpulse-qualification/1"' in render_report(report, ".json")
    md = render_report(report, ".md")
    assert "## sharp" in md and "| Cohen's d |" in md and "| a | 10 | 10 |" in md
