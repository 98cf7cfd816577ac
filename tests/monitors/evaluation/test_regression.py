"""Regression tests against a baseline: exact p-values by hand, and noise stays noise."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from monitors.evaluation import EventRecord, compare_reports, compare_scores, compare_shares


def _report(records: list[EventRecord]) -> dict:  # type: ignore[type-arg]
    return {"created": "t", "events": [r.to_dict() for r in records]}


def test_mann_whitney_exact_p_on_a_clean_shift() -> None:
    current = [0.1, 0.2, 0.3, 0.4, 0.5]
    baseline = [0.6, 0.7, 0.8, 0.9, 1.0]
    row = compare_scores(current, baseline)
    # every current score is below every baseline score: U = 0, exact p = 1 / C(10, 5)
    assert row["u"] == 0.0
    assert row["p_value"] == pytest.approx(1 / comb(10, 5))
    assert row["delta"] == pytest.approx(-0.5)
    assert row["delta_ci95"][0] <= -0.5 <= row["delta_ci95"][1] < 0


def test_fisher_exact_p_on_a_share_increase() -> None:
    row = compare_shares(10, 20, 0, 20)
    # hypergeometric tail: all 10 hits fall in the current 20 of 40 events
    assert row["p_value"] == pytest.approx(comb(20, 10) / comb(40, 10))
    assert row["share"] == 0.5 and row["baseline_share"] == 0.0 and row["delta"] == 0.5


def test_too_few_samples_are_not_tested() -> None:
    assert compare_scores([0.1] * 4, [0.9] * 50)["status"] == "insufficient_data"
    assert compare_shares(3, 4, 0, 100)["status"] == "insufficient_data"


def test_regressions_need_significance_and_the_bad_direction() -> None:
    base = [EventRecord(f"b{i}", None, [], True, {"m": 0.9, "up": 0.5}, gates={"critical": True})
            for i in range(10)]  # fmt: skip
    cur = [
        EventRecord(f"c{i}", None, ["refusal"] if i < 6 else [], True,
                    {"m": 0.5, "up": 0.9}, gates={"critical": i >= 6})
        for i in range(10)
    ]  # fmt: skip
    reg = compare_reports(_report(cur), _report(base), alpha=0.05)
    assert reg["metrics"]["m"]["regressed"] is True
    assert reg["metrics"]["up"]["regressed"] is False  # significant, but an improvement
    assert reg["failure_modes"]["refusal"]["regressed"] is True
    assert reg["gates"]["critical"]["regressed"] is True
    # the other way round only "up" got worse
    back = compare_reports(_report(base), _report(cur), alpha=0.05)
    found = [f"{s}:{n}" for s in ("metrics", "failure_modes", "gates")
             for n, r in back[s].items() if r["regressed"]]  # fmt: skip
    assert found == ["metrics:up"]


def test_noise_is_not_called_a_regression() -> None:
    rng = np.random.default_rng(3)

    def run(prefix: str) -> list[EventRecord]:
        return [
            EventRecord(
                f"{prefix}{i}", None, ["refusal"] if rng.random() < 0.05 else [], True,
                {f"metric{k}": float(rng.beta(5, 2)) for k in range(12)},
            )
            for i in range(300)
        ]  # fmt: skip

    reg = compare_reports(_report(run("a")), _report(run("b")), alpha=0.05)
    assert not any(r["regressed"] for r in reg["metrics"].values())
    assert not any(r["regressed"] for r in reg["failure_modes"].values())
    # a real, modest drop in one metric among the same noise is still found
    shifted = run("c")
    for r in shifted:
        r.scores["metric0"] = max(0.0, r.scores["metric0"] - 0.08)
    reg = compare_reports(_report(shifted), _report(run("d")), alpha=0.05)
    assert [m for m, r in reg["metrics"].items() if r["regressed"]] == ["metric0"]
    assert reg["metrics"]["metric0"]["p_adjusted"] >= reg["metrics"]["metric0"]["p_value"]
