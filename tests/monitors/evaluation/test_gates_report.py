"""Run-level gates, the report's exit code and summaries on hand-computed cases."""

from __future__ import annotations

import pytest

from monitors.evaluation import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    EXIT_REGRESSION,
    EventRecord,
    InputStats,
    JudgeStats,
    build_report,
    exit_code,
    gate_floors,
    summarize_gates,
)
from monitors.metrics.gates import GateSettings, Threshold

GATES = GateSettings(
    critical=[Threshold(metric="faithfulness", min=0.7)],
    quality=[Threshold(metric="answer_relevance", min=0.6, min_by_judge={"lenient": 0.2})],
    diagnostic=[],
)


def _records() -> list[EventRecord]:
    return [
        EventRecord("e1", "a", ["refusal"], True, {"faithfulness": 0.9, "answer_relevance": 0.3},
                    {"answer_relevance": "lenient"}),
        EventRecord("e2", "a", [], True, {"faithfulness": 0.8, "answer_relevance": 0.3}),
        EventRecord("e3", "b", ["refusal", "pii_leak"], True, {"faithfulness": 0.5}),
        EventRecord("e4", "b", [], False),
    ]  # fmt: skip


def test_tier_pass_rates_per_threshold_shares_and_judge_floors() -> None:
    tiers = summarize_gates(_records(), GATES, {"critical": 0.95, "quality": 0.5})
    crit = tiers["critical"]
    # faithfulness scored on 3 events, 2 at or above 0.7
    assert (crit["evaluated"], crit["passed"]) == (3, 2)
    assert crit["pass_rate"] == pytest.approx(2 / 3) and crit["status"] == "fail"
    [th] = crit["thresholds"]
    assert th["scored"] == 3 and th["pass_rate"] == pytest.approx(2 / 3)
    assert th["mean"] == pytest.approx((0.9 + 0.8 + 0.5) / 3)
    # answer_relevance 0.3 passes for the judge "lenient" (floor 0.2), fails otherwise (0.6)
    qual = tiers["quality"]
    assert (qual["evaluated"], qual["passed"], qual["status"]) == (2, 1, "pass")
    assert qual["thresholds"][0]["floors_used"] == {"-": 0.6, "lenient": 0.2}
    assert tiers["diagnostic"]["status"] == "not_evaluated"
    assert tiers["diagnostic"]["pass_rate"] is None


def test_floors_come_from_the_alert_then_overrides() -> None:
    floors = gate_floors(["critical"], 0.9, {"quality": 0.5})
    assert floors == {"critical": 0.9, "quality": 0.5, "diagnostic": 0.8}


def _report(floor: float, **kw: object) -> dict:  # type: ignore[type-arg]
    floors = gate_floors(["critical"], floor, {})
    return build_report(_records(), InputStats(), JudgeStats(), GATES, floors, **kw)  # type: ignore[arg-type]


def test_exit_code_is_3_when_a_critical_gate_fails_only() -> None:
    failing = _report(0.95)
    assert failing["exit"]["failed_gates"] == ["critical"]
    assert exit_code(failing) == EXIT_GATE_FAILED
    passing = _report(0.6)  # 2/3 >= 0.6
    assert passing["exit"]["failed_gates"] == [] and exit_code(passing) == EXIT_OK
    # a non-critical tier failing does not fail the run
    floors = gate_floors(["critical"], 0.6, {"quality": 0.99})
    report = build_report(_records(), InputStats(), JudgeStats(), GATES, floors)
    assert report["gates"]["quality"]["status"] == "fail" and exit_code(report) == EXIT_OK


def test_exit_code_4_only_on_request_and_after_gate_failures() -> None:
    base = _report(0.6)
    worse = dict(base)
    worse_records = [EventRecord(f"x{i}", None, [], True, {"faithfulness": 0.75}) for i in range(8)]
    floors = gate_floors(["critical"], 0.0, {})
    better = [EventRecord(f"y{i}", None, [], True, {"faithfulness": 0.95}) for i in range(8)]
    baseline = build_report(better, InputStats(), JudgeStats(), GATES, floors)
    report = build_report(
        worse_records, InputStats(), JudgeStats(), GATES, floors, baseline=baseline
    )
    assert report["exit"]["regressions"] == ["metrics:faithfulness"]
    assert exit_code(report) == EXIT_OK
    assert exit_code(report, fail_on_regression=True) == EXIT_REGRESSION
    worse["exit"] = {"failed_gates": ["critical"], "regressions": ["metrics:x"]}
    assert exit_code(worse, fail_on_regression=True) == EXIT_GATE_FAILED


def test_report_summaries() -> None:
    r = _report(0.95)
    assert r["failure_modes"] == {
        "refusal": {"count": 2, "share": 0.5},
        "pii_leak": {"count": 1, "share": 0.25},
    }
    f = r["metrics"]["faithfulness"]
    assert f["scored"] == 3 and f["mean"] == pytest.approx(0.733333, abs=1e-6)
    assert f["bands"] == {"severe": 0, "moderate": 1, "minor": 1, "none": 1}
    assert f["ci95"][0] <= f["mean"] <= f["ci95"][1]
    cats = r["categories"]
    assert cats["a"]["events"] == 2 and cats["b"]["failure_modes"]["refusal"]["share"] == 0.5
    assert cats["b"]["gates"]["critical"] == {"evaluated": 1, "pass_rate": 0.0}
    assert len(r["events"]) == 4 and r["events"][0]["scores"]["faithfulness"] == 0.9
