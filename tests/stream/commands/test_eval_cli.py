"""`ragpulse eval` and `ragpulse calibrate` end to end on files (the real CLI entry point)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stream.cli import main

CONTEXT = [{"id": "kb1", "content": "Reset the VPN token from the self-service portal. "
            "Tokens expire after 90 days. The portal is at portal.example.com."}]  # fmt: skip


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("eval")
    files = {"base": d / "base.jsonl", "degraded": d / "degraded.jsonl"}
    assert main(["traffic", "-n", "300", "-o", str(files["base"])]) == 0
    assert main(["traffic", "-n", "300", "--phase", "degraded", "-o", str(files["degraded"])]) == 0
    return files


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_eval_on_the_bundled_sample_writes_json_markdown_html(
    sample: dict[str, Path], tmp_path: Path
) -> None:
    out = [tmp_path / f"report.{ext}" for ext in ("json", "md", "html")]
    args = ["eval", "-i", str(sample["degraded"]), "--judge", "embedded", "--sample-rate", "0.08"]
    args += ["--min-pass-rate", "critical=0.99"]
    rc = main([*args, *(a for p in out for a in ("-o", str(p)))])
    report = _json(out[0])
    # one of the 300 lines is malformed (the generator's default 0.5 %)
    assert report["input"]["lines"] == 300 and report["input"]["scored"] == 299
    judged = report["input"]["judged"]
    assert 5 <= judged <= 60 and report["judge"]["judged"] == judged
    assert report["judge"]["name"] == "embedded-minilm-v1"
    assert report["metrics"]["faithfulness"]["scored"] == judged
    assert {"should_answer", "should_reject_policy"} <= set(report["categories"])
    assert report["failure_modes"]["false_rejection"]["count"] > 0
    # the degraded sample carries deliberate failures (leaked PII): it misses a 99 % floor
    crit = report["gates"]["critical"]
    assert crit["status"] == "fail" and crit["pass_rate"] < 0.99
    assert rc == 3 and report["exit"] == {
        "code": 3,
        "failed_gates": ["critical"],
        "regressions": [],
    }
    md = out[1].read_text()
    assert "## Gates" in md and "| Critical (exit code) | page |" in md
    html = out[2].read_text()
    assert html.count("data:image/png;base64,") == 3


def test_gate_floor_override_passes_and_noise_is_not_a_regression(
    sample: dict[str, Path], tmp_path: Path
) -> None:
    base = tmp_path / "base.json"
    common = ["eval", "-i", str(sample["base"]), "--judge", "none"]
    assert main([*common, "-o", str(base)]) == 0  # no judge: no gate evaluated, nothing fails
    again = tmp_path / "again.json"
    rc = main([*common, "--baseline", str(base), "--fail-on-regression", "-o", str(again)])
    regressions = _json(again)["regressions"]
    assert rc == 0 and not any(r["regressed"] for r in regressions["failure_modes"].values())


def test_degraded_traffic_is_a_significant_regression(
    sample: dict[str, Path], tmp_path: Path
) -> None:
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    assert main(["eval", "-i", str(sample["base"]), "--judge", "none", "-o", str(base)]) == 0
    args = ["eval", "-i", str(sample["degraded"]), "--judge", "none", "--baseline", str(base)]
    assert main([*args, "-o", str(cur)]) == 0  # regressions alone do not fail by default
    assert main([*args, "--fail-on-regression", "-o", str(cur)]) == 4
    assert _json(cur)["exit"]["code"] == 4  # the report records the code the process exits with
    modes = _json(cur)["regressions"]["failure_modes"]
    assert modes["false_rejection"]["regressed"] and modes["false_rejection"]["p_adjusted"] < 0.05
    assert modes["pii_leak"]["regressed"]  # the degraded prompt lost its redaction step
    assert not modes["financial_advice"]["regressed"]  # unchanged


def test_labels_file_is_merged_into_the_events(sample: dict[str, Path], tmp_path: Path) -> None:
    lines = sample["base"].read_text(errors="replace").splitlines()  # one line is bad UTF-8
    ids = [json.loads(line)["event_id"] for line in lines[:5]]
    labels = tmp_path / "labels.jsonl"
    rows = [{"event_id": i, "labels": {"category": "golden"}} for i in ids]
    rows.append({"event_id": "no-such-event", "labels": {"category": "x"}})
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.json"
    args = ["eval", "-i", str(sample["base"]), "--labels", str(labels), "--judge", "none"]
    assert main([*args, "-o", str(out)]) == 0
    report = _json(out)
    assert report["categories"]["golden"]["events"] == 5
    assert (report["input"]["labels_matched"], report["input"]["labels_unmatched"]) == (5, 1)


@pytest.mark.parametrize(
    "extra",
    [
        ["-o", "report.txt"],  # unknown format
        ["-o", "r.json", "--baseline", "missing.json"],
        ["-o", "r.json", "--labels", "missing.jsonl"],
        ["-o", "r.json", "--judge", "no-such-judge"],
    ],
)
def test_bad_usage_exits_2(
    sample: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "-i", str(sample["base"]), *extra]) == 2
    assert not (tmp_path / "r.json").exists()


def _labelled(tmp_path: Path) -> Path:
    answers = [
        ("Reset the VPN token from the self-service portal.", True),
        ("Tokens expire after 90 days; reset them from the portal.", True),
        ("The portal is at portal.example.com.", True),
        ("Call the helpdesk on 555-0199 and ask for Dave, who resets tokens by fax.", False),
        ("VPN tokens never expire and cannot be reset; buy a new laptop.", False),
        ("Tokens are reset every Tuesday by the Berlin office after a 14-day wait.", False),
    ]
    path = tmp_path / "human.jsonl"
    rows = [
        {"event_id": f"h{i}", "query": "How do I reset my VPN token?", "response": text,
         "retrieved_context": CONTEXT, "labels": {"human": {"faithfulness": good}}}
        for i, (text, good) in enumerate(answers)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _scorecards(path: Path, scores: list[float], judge: str) -> Path:
    cards = [
        {"event_id": f"h{i}", "metrics": {"faithfulness": {"status": "scored", "score": s,
                                                           "judge": judge}}}
        for i, s in enumerate(scores)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(c) + "\n" for c in cards) + '{"line": 9, "error": "x"}\n')
    return path


def test_calibrate_runs_the_embedded_judge(tmp_path: Path) -> None:
    human = _labelled(tmp_path)
    out_json, out_md = tmp_path / "calib.json", tmp_path / "calib.md"
    rc = main(["calibrate", "-i", str(human), "--judge", "embedded",
               "-o", str(out_json), "-o", str(out_md)])  # fmt: skip
    report = _json(out_json)
    row = report["metrics"]["faithfulness"]["embedded-minilm-v1"]
    assert row["n"] == 6 and row["kappa_kind"] == "binary"
    assert row["confusion_binary"] is not None and sum(row["confusion_binary"].values()) == 6
    assert rc == (3 if row["below_target"] else 0)
    assert "## Agreement with the human labels" in out_md.read_text()


def test_calibrate_with_precomputed_scores_and_a_panel(tmp_path: Path) -> None:
    human = _labelled(tmp_path)
    good = _scorecards(tmp_path / "good.jsonl", [0.9, 0.8, 0.95, 0.1, 0.2, 0.3], "good")
    bad = _scorecards(tmp_path / "bad.jsonl", [0.9, 0.2, 0.95, 0.8, 0.2, 0.3], "bad")
    out = tmp_path / "calib.json"
    base = ["calibrate", "-i", str(human), "--scores", str(good), "-o", str(out)]
    assert main(base) == 0
    assert _json(out)["metrics"]["faithfulness"]["good"]["kappa"] == pytest.approx(1.0)
    # both judges are measured against the humans; the second misses the target
    assert main([*base, "--compare-scores", str(bad)]) == 3
    report = _json(out)
    assert [(f["metric"], f["judge"]) for f in report["flagged"]] == [("faithfulness", "bad")]
    # bad agrees with the humans on 4 of 6 (binary at the gate floor): kappa 1/3
    assert report["metrics"]["faithfulness"]["bad"]["kappa"] == pytest.approx(1 / 3)
    panel = report["panel"]
    assert panel["judges"] == ["good", "bad"]
    assert panel["metrics"]["faithfulness"]["n"] == 6
    assert panel["metrics"]["faithfulness"]["accuracy"] == pytest.approx(4 / 6)


def test_calibrate_rejects_bad_human_labels(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    row = {"event_id": "x", "query": "q", "response": "r",
           "labels": {"human": {"faithfulness": "awful"}}}  # fmt: skip
    path.write_text(json.dumps(row) + "\n")
    assert main(["calibrate", "-i", str(path), "-o", str(tmp_path / "c.json")]) == 2


#: (question, expected answer, a right response, a wrong response)
GOLDEN = [
    ("How long are VPN tokens valid?", "VPN tokens are valid for 90 days.",
     "VPN tokens expire after 90 days.", "VPN tokens never expire."),
    ("Where do I reset my VPN token?", "Reset the VPN token from the self-service portal.",
     "You reset the token from the self-service portal.",
     "Only the Berlin office can reset tokens, by fax."),
    ("What is the portal's address?", "The portal is at portal.example.com.",
     "The portal is at portal.example.com.", "The portal is at intranet.example.org."),
    ("Who approves a new laptop?", "Your line manager approves a new laptop.",
     "A new laptop is approved by your line manager.", "Nobody approves laptops; buy one."),
    ("How many days of leave do new staff get?", "New staff get 25 days of leave.",
     "New staff receive 25 days of leave per year.", "New staff get 10 days of leave."),
    ("Which port does the mail relay use?", "The mail relay listens on port 587.",
     "The relay uses port 587.", "The relay uses port 25 only."),
]  # fmt: skip


def _golden(path: Path, right: bool) -> Path:
    rows: list[dict[str, Any]] = [
        {"event_id": f"ref-{i}", "conversation_id": f"c{i}", "query": q,
         "response": good if right else bad,
         "retrieved_context": [{"id": "kb", "content": gold}],
         "labels": {"expected_answer": gold}}
        for i, (q, gold, good, bad) in enumerate(GOLDEN)
    ]  # fmt: skip
    rows.append({"event_id": "plain", "query": "hi", "response": "Hello, how can I help?"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_reports_reference_based_quality_and_its_regression(tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text("judge:\n  metrics: [faithfulness, answer_correctness, "
                      "answer_correctness_analytic]\n")  # fmt: skip
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    out = [cur, tmp_path / "cur.md", tmp_path / "cur.html"]
    common = ["-c", str(config), "eval", "--judge", "embedded"]
    assert main([*common, "-i", str(_golden(tmp_path / "right.jsonl", True)), "-o", str(base)]) == 0
    args = [*common, "-i", str(_golden(tmp_path / "wrong.jsonl", False)), "--baseline", str(base)]
    rc = main([*args, "--fail-on-regression", *(a for p in out for a in ("-o", str(p)))])
    before, report = _json(base)["reference"], _json(cur)["reference"]
    assert (report["events"], report["judged"]) == (6, 6)  # the unlabelled turn is not one
    names = ["answer_correctness", "answer_precision", "answer_recall", "answer_f1"]
    assert list(report["metrics"]) == names
    for name in names:
        row = report["metrics"][name]
        assert row["n"] == 6 and sum(row["bands"].values()) == pytest.approx(1.0)
        assert row["ci95"] is not None and row["mean"] < before["metrics"][name]["mean"]
    # wrong answers against the same references: a significant regression, exit code 4
    regression = _json(cur)["regressions"]["metrics"]["answer_correctness"]
    assert regression["regressed"] and regression["delta"] < 0
    assert "metrics:answer_correctness" in _json(cur)["exit"]["regressions"] and rc == 4
    md = out[1].read_text()
    assert "## Reference-based quality" in md and "6 events carry a reference" in md
    assert "| answer_correctness | 6 |" in md and "**REGRESSED** |" in md
    assert '<h2 id="reference">Reference-based quality</h2>' in out[2].read_text()


def test_eval_without_references_has_no_reference_block(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"event_id": "p", "query": "hi", "response": "Hello."}) + "\n")
    out = tmp_path / "r.json"
    assert main(["eval", "-i", str(path), "--judge", "embedded", "-o", str(out)]) == 0
    report = _json(out)
    assert "reference" not in report  # answer_correctness, if enabled, skipped the turn
    assert report["metrics"].get("answer_correctness", {}).get("scored", 0) == 0
