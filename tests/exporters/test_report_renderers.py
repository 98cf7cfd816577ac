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


def test_headline_names_every_failing_gate_even_when_the_critical_one_passes() -> None:
    report = eval_report()
    gates = report["gates"]
    gates["critical"]["status"] = "pass"
    report["exit"]["failed_gates"] = []
    for gate in ("quality", "diagnostic"):
        gates[gate]["status"] = "fail"
    md = render_report(report, ".md").splitlines()[2]
    assert md.startswith("**PASS: critical gate critical; also failing (not critical): ")
    assert "quality, diagnostic" in md.split(" — ")[0]
    html = render_report(report, ".html")
    assert '<span class="pass">PASS: critical gate critical</span>' in html
    assert '<span class="fail">also failing (not critical): quality, diagnostic</span>' in html
    assert html.count('<td class="fail">FAIL</td>') == 2  # the gate table, same colour
    gates["quality"]["status"] = gates["diagnostic"]["status"] = "pass"
    assert "also failing" not in render_report(report, ".md")


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


def reference_report(baseline: dict[str, Any] | None = None, shift: float = 0.0) -> dict[str, Any]:
    """Six golden turns with answer_correctness (and F1 on four), one unlabelled turn."""
    records = [
        EventRecord(f"g{i}", None, [], True,
                    {"faithfulness": 0.9, "answer_correctness": 0.2 + 0.15 * i - shift,
                     **({"answer_f1": 0.5} if i < 4 else {})}, reference=True)
        for i in range(6)
    ]  # fmt: skip
    records.append(EventRecord("p", None, [], True, {"faithfulness": 0.8}))
    return build_report(
        records, InputStats(path="golden.jsonl", lines=7, scored=7, judged=7), JudgeStats(),
        GateSettings(), gate_floors(["critical"], 0.0, {}), baseline=baseline,
    )  # fmt: skip


def test_markdown_shows_the_reference_section_with_baseline_verdicts() -> None:
    plain = render_report(eval_report(), ".md")
    assert "Reference-based quality" not in plain  # no reference-based score: no section
    report = reference_report(baseline=reference_report(), shift=0.1)
    md = render_report(report, ".md")
    section = md.split("\n## Reference-based quality\n", 1)[1].split("\n## ", 1)[0]
    assert "6 events carry a reference" in section and "6 have a reference-based score" in section
    header = "| metric | scored | mean | 95 % CI | severe | moderate | minor | none |"
    assert header + " judge errors | vs baseline |" in section
    # 0.1 .. 0.85: severe 0.1, 0.25; moderate 0.4, 0.55; minor 0.7, 0.85
    assert "| answer_correctness | 6 | 0.475 |" in section
    assert "| 33.3 % | 33.3 % | 33.3 % | 0.0 % | 0 | no significant change |" in section
    assert "| answer_f1 | 4 | 0.500 |" in section and "faithfulness" not in section
    assert md.index("## Judge metrics") < md.index("## Reference-based quality")
    assert "| vs baseline |" not in render_report(reference_report(), ".md")


def test_html_shows_the_reference_section() -> None:
    html = render_report(reference_report(), ".html")
    assert '<h2 id="reference">Reference-based quality</h2>' in html
    assert "labels.expected_answer" in html and "<td>answer_correctness</td>" in html
