"""The report's reference-based block on hand-computed cases, and its metric list against
the metric registry."""

from __future__ import annotations

from typing import Any

import pytest

import monitors.metrics  # noqa: F401  (registers the built-in metrics)
from monitors.evaluation import EventRecord, InputStats, JudgeStats, build_report, gate_floors
from monitors.evaluation.reference_summary import REFERENCE_METRICS, has_reference
from monitors.metrics.base import _METRICS, available_metrics, create_metric
from monitors.metrics.gates import GateSettings


def _parts(name: str) -> list[Any]:
    """A registered metric as what declares `needs`: its class, or a bundle's parts."""
    cls: Any = _METRICS.factory(name)
    return [cls] if hasattr(cls, "needs") else list(create_metric(name).parts)  # type: ignore[attr-defined]


def test_reference_metrics_are_the_outputs_of_the_metrics_that_need_a_reference() -> None:
    parts = [p for name in available_metrics() for p in _parts(name)]
    derived = {o for p in parts if "reference" in p.needs for o in p.outputs}
    assert set(REFERENCE_METRICS) == derived
    assert len(REFERENCE_METRICS) == len(derived)
    assert "tonality" not in REFERENCE_METRICS  # judged without a reference


def _records() -> list[EventRecord]:
    return [
        EventRecord("g1", scores={"faithfulness": 0.9, "answer_correctness": 0.2}, sampled=True,
                    reference=True),
        EventRecord("g2", scores={"faithfulness": 0.8, "answer_correctness": 0.7,
                                  "answer_f1": 0.5}, sampled=True, reference=True),
        EventRecord("g3", scores={"answer_correctness": 0.9}, sampled=True),  # evidence only
        EventRecord("g4", sampled=True, not_scored={"answer_correctness": "judge_error"}),
        EventRecord("g5", sampled=False, reference=True),  # carried one, not judged
        EventRecord("p1", scores={"faithfulness": 0.4}, sampled=True,
                    not_scored={"answer_correctness": "skipped"}),
    ]  # fmt: skip


def _report(records: list[EventRecord], **kw: Any) -> dict[str, Any]:
    floors = gate_floors(["critical"], 0.0, {})
    return build_report(records, InputStats(), JudgeStats(), GateSettings(), floors, **kw)


def test_reference_block_counts_events_and_summarises_each_metric() -> None:
    report = _report(_records())
    ref = report["reference"]
    assert (ref["events"], ref["judged"]) == (5, 3)
    assert list(ref["metrics"]) == ["answer_correctness", "answer_f1"]  # registry order
    ac = ref["metrics"]["answer_correctness"]
    assert ac["n"] == 3 and ac["mean"] == pytest.approx(0.6)
    assert ac["ci95"] == report["metrics"]["answer_correctness"]["ci95"]  # the same CI
    assert ac["ci95"][0] <= ac["mean"] <= ac["ci95"][1]
    # 0.2 severe, 0.7 minor, 0.9 none: shares of the three scored turns
    assert ac["bands"] == pytest.approx({"severe": 1 / 3, "moderate": 0.0, "minor": 1 / 3,
                                         "none": 1 / 3}, abs=1e-6)  # fmt: skip
    assert ac["judge_error"] == 1
    f1 = ref["metrics"]["answer_f1"]
    assert (f1["n"], f1["mean"], f1["ci95"]) == (1, 0.5, None)
    assert list(report).index("reference") < list(report).index("events")


def test_no_reference_block_without_reference_based_scores() -> None:
    records = [EventRecord("p1", scores={"faithfulness": 0.4}, sampled=True, reference=True)]
    assert "reference" not in _report(records)
    only_errors = [EventRecord("g", sampled=True, not_scored={"answer_correctness": "judge_error"})]
    assert "reference" not in _report(only_errors)


def test_reference_flag_round_trips_and_is_omitted_when_false() -> None:
    rec = EventRecord("g1", reference=True)
    assert rec.to_dict()["reference"] is True
    assert EventRecord.from_dict(rec.to_dict()).reference
    assert "reference" not in EventRecord("p1").to_dict()
    assert not EventRecord.from_dict({"event_id": "old"}).reference  # older reports
    assert has_reference(EventRecord("x", scores={"dece_f2": 0.3}))
    assert not has_reference(EventRecord("y", not_scored={"answer_correctness": "skipped"}))


def test_regressions_cover_reference_metrics_like_any_metric_mean() -> None:
    def run(score: float, n: int = 8) -> list[EventRecord]:
        return [
            EventRecord(f"g{i}", scores={"answer_correctness": score + 0.01 * i}, sampled=True,
                        reference=True)
            for i in range(n)
        ]  # fmt: skip

    baseline = _report(run(0.8))
    report = _report(run(0.4), baseline=baseline, fail_on_regression=True)
    row = report["regressions"]["metrics"]["answer_correctness"]
    assert row["status"] == "tested" and row["regressed"] and row["delta"] == pytest.approx(-0.4)
    assert report["exit"]["regressions"] == ["metrics:answer_correctness"]
    assert report["exit"]["code"] == 4
