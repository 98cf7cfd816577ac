"""JSON / Markdown renderers of eval and calibration reports, chosen by file suffix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from exporters.reports import render_report, report_formats, write_report
from monitors.evaluation import (
    EventRecord,
    InputStats,
    JudgeStats,
    build_calibration,
    build_report,
    gate_floors,
    parse_human,
)
from monitors.metrics.gates import GateSettings


def eval_report(baseline: dict[str, Any] | None = None) -> dict[str, Any]:
    records = [
        EventRecord(f"e{i}", "should_answer" if i % 3 else "should_reject_policy",
                    ["refusal"] if i % 4 == 0 else [], True,
                    {"faithfulness": 0.2 + 0.07 * i, "answer_relevance": 0.9})
        for i in range(12)
    ]  # fmt: skip
    judge = JudgeStats(name="embedded-minilm-v1", latencies_s=[0.1] * 12, calls=24)
    return build_report(
        records, InputStats(path="in.jsonl", lines=12, scored=12, judged=12), judge,
        GateSettings(), gate_floors(["critical"], 0.95, {}), baseline=baseline,
    )  # fmt: skip


def test_formats_are_registered_by_kind_and_suffix() -> None:
    assert report_formats("eval") == [".html", ".json", ".md"]
    assert report_formats("calibration") == [".json", ".md"]
    with pytest.raises(ValueError, match=r"no '\.csv' renderer"):
        render_report(eval_report(), ".csv")


def test_json_round_trips(tmp_path: Path) -> None:
    report = eval_report()
    path = write_report(report, tmp_path / "r.json")
    assert json.loads(path.read_text()) == report


def test_markdown_has_every_section_and_the_verdict() -> None:
    report = eval_report(baseline=eval_report())
    md = render_report(report, ".md")
    for heading in ("## Gates", "## Judge metrics", "## Failure modes",
                    "## Categories (labels.category)", "## Judge cost and latency",
                    "## Regressions vs baseline"):  # fmt: skip
        assert f"\n{heading}\n" in md
    assert md.splitlines()[2].startswith("**FAIL: critical")
    assert "| refusal | 3 | 25.0 % |" in md
    assert "| should_reject_policy | 4 | refusal 25.0 % |" in md
    # the same data as its own baseline: tested, and no regression
    assert "| faithfulness | 0.585 | 0.585 | 0.000 |" in md
    assert "REGRESSED" not in md and "no significant change" in md
    assert "| embedded-minilm-v1 | 12 | 0.100 |" in md


def test_calibration_markdown_lists_flagged_metrics_and_confusions() -> None:
    human = {f"e{i}": {"faithfulness": parse_human(i < 3)} for i in range(6)}
    scores = {f"e{i}": {"faithfulness": 0.9 if i < 2 else 0.1} for i in range(6)}
    report = build_calibration(human, [("j", scores)], {"faithfulness": 0.5})
    md = render_report(report, ".md")
    assert "1 metric/judge pair(s) below the κ target" in md
    assert "| faithfulness | j | 6 |" in md and "**below target**" in md
    assert "| good | 2 | 1 |" in md and "| bad | 0 | 3 |" in md
    # ECE over 10 bins: (2 x |0.9 - 1| + 4 x |0.1 - 0.25|) / 6 = 0.133, with its diagram
    assert "| 0.133 | 0.5 | **below target** |" in md and "ECE 0.133" in md
    assert "| 0.1-0.2 | 4 | 0.100 | 0.250 |" in md and "| 0.9-1 | 2 | 0.900 | 1.000 |" in md
    assert json.loads(render_report(report, ".json"))["flagged"][0]["metric"] == "faithfulness"
