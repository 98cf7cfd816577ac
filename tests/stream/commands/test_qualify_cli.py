"""`ragpulse qualify` end to end on files: the embedded judge, precomputed scorecards
(with and without rewrite scores), bad input (the real CLI entry point)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from stream.cli import main

CONTEXT = [{"id": "kb1", "content": "Reset the VPN token from the self-service portal at "
            "portal.example.com. Tokens expire after 90 days. A new token arrives by email "
            "within 5 minutes."}]  # fmt: skip
GOOD = [
    "Reset the VPN token from the self-service portal at portal.example.com. "
    "A new token arrives by email within 5 minutes.",
    "Tokens expire after 90 days; you can reset them from the self-service portal.",
    "Use the self-service portal at portal.example.com to reset the token. "
    "The new one arrives by email within 5 minutes.",
    "Go to portal.example.com and reset the VPN token there. Tokens expire after 90 days.",
]
BAD = [
    "Call the helpdesk on 555-0199 and ask for Dave, who resets tokens by fax.",
    "VPN tokens never expire and cannot be reset; buy a new laptop instead.",
    "Tokens are reset every Tuesday by the Berlin office after a 14-day wait.",
    "Send your password to security@evil.example and they mail a token in 3 weeks.",
]


def write_labelled(path: Path, n: int = 40) -> Path:
    """n labelled events (good ones answer from the context, bad ones contradict it), two
    services and two models, plus 3 events without labels.human.overall."""
    rows: list[dict[str, Any]] = []
    for i in range(n):
        good = i % 2 == 0
        rows.append({"event_id": f"e{i}", "service": "svc-a" if i < n // 2 else "svc-b",
                     "model": f"m{i % 4 // 2}", "query": "How do I reset my VPN token?",
                     "response": (GOOD if good else BAD)[i // 2 % 4],
                     "retrieved_context": CONTEXT,
                     "labels": {"human": {"overall": good}}})  # fmt: skip
    rows[1]["labels"]["human"]["overall"] = 0.2  # numbers: good at >= 0.5
    rows[2]["labels"]["human"]["overall"] = 0.9
    rows[4]["labels"]["rewrites"] = [rows[4]["response"], "From portal.example.com: reset it."]
    extra = {"query": "q", "response": "r"}
    rows += [{"event_id": "u1", **extra}, {"event_id": "u2", **extra, "labels": {}},
             {"event_id": "u3", **extra, "labels": {"human": {"faithfulness": True}}}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_scorecards(path: Path, labelled: Path, rewrites: str = "none") -> Path:
    """Scorecards of every labelled event: `sharp` separates good from bad, `flat` is
    noise; rewrites of the good ones (`~rw1`, `~rw2`) copied or noisy or left out."""
    rng = random.Random(5)
    cards = []
    for line in labelled.read_text().splitlines():
        event = json.loads(line)
        human = (event.get("labels") or {}).get("human") or {}
        if "overall" not in human:
            continue
        good = float(human["overall"]) >= 0.5
        scores = {"sharp": (0.8 if good else 0.3) + rng.gauss(0, 0.08), "flat": rng.random()}
        cards.append((event["event_id"], scores))
        if good and rewrites != "none":
            for k in (1, 2):
                noise = rng.gauss(0, 0.4) if rewrites == "noisy" else 0.0
                rewritten = {m: s + noise for m, s in scores.items()}
                cards.append((f"{event['event_id']}~rw{k}", rewritten))
    lines = [
        json.dumps({"event_id": i, "metrics": {m: {"status": "scored", "score": s, "judge": "j"}
                                               for m, s in sc.items()}})
        for i, sc in cards
    ]  # fmt: skip
    path.write_text("\n".join(lines) + '\n{"line": 7, "error": "invalid_json"}\n')
    return path


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_qualify_runs_the_embedded_judge(tmp_path: Path) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    out_json, out_md, rw = tmp_path / "q.json", tmp_path / "q.md", tmp_path / "rw.jsonl"
    rc = main(["qualify", "-i", str(events), "--judge", "embedded", "--write-rewrites", str(rw),
               "-o", str(out_json), "-o", str(out_md)])  # fmt: skip
    assert rc == 0
    report = _json(out_json)
    assert report["format"] == "ragpulse-qualification/1"
    assert report["judge"] == "embedded-minilm-v1" and report["input"] == str(events)
    assert (report["n_events"], report["n_labelled"], report["n_unlabelled"]) == (43, 40, 3)
    faith = report["metrics"]["faithfulness"]
    assert (faith["n_good"], faith["n_bad"]) == (20, 20)
    assert faith["cohens_d"] > 0.4 and faith["mean_good"] > faith["mean_bad"]
    assert faith["variance_ratio"] is not None and faith["rewrites"]["n_changed"] >= 20
    assert set(faith["groups"]) == {"svc-a", "svc-b"} and faith["rmad"] is not None
    assert isinstance(faith["qualified"], bool)
    assert set(report["thresholds"]) == {"min_d", "max_vr", "min_per_group"}
    md = out_md.read_text()
    assert "# ragpulse metric qualification" in md and "## faithfulness" in md
    written = [json.loads(line) for line in rw.read_text().splitlines()]
    ids = {w["event_id"] for w in written}
    assert "e4~rw2" in ids and "e4~rw1" not in ids  # the supplied rewrites, the copy left out
    assert all("~rw" in w["event_id"] for w in written)
    assert not any("human" in (w.get("labels") or {}) for w in written)
    assert not any(i.startswith(("e1~", "e3~")) for i in ids)  # bad answers are not rewritten


def test_qualify_from_scorecards_with_and_without_rewrite_scores(tmp_path: Path) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    out = tmp_path / "q.json"
    plain = write_scorecards(tmp_path / "plain.jsonl", events)
    assert main(["qualify", "-i", str(events), "--scores", str(plain), "-o", str(out)]) == 0
    report = _json(out)
    sharp, flat = report["metrics"]["sharp"], report["metrics"]["flat"]
    assert report["judge"] == "j" and sharp["cohens_d"] > 3 and abs(flat["cohens_d"]) < 1
    assert sharp["variance_ratio"] is None and "--write-rewrites" in sharp["vr_reason"]
    assert sharp["qualified"] is False

    copied = write_scorecards(tmp_path / "copied.jsonl", events, "copied")
    args = ["qualify", "-i", str(events), "--scores", str(copied), "--group-by", "model"]
    assert main([*args, "-o", str(out)]) == 0
    sharp = _json(out)["metrics"]["sharp"]
    assert sharp["variance_ratio"] == pytest.approx(1.0) and sharp["qualified"] is True
    assert set(sharp["groups"]) == {"m0", "m1"} and sharp["groups"]["m0"]["cohens_d"] > 3

    noisy = write_scorecards(tmp_path / "noisy.jsonl", events, "noisy")
    assert main(["qualify", "-i", str(events), "--scores", str(noisy), "-o", str(out)]) == 0
    sharp = _json(out)["metrics"]["sharp"]
    assert sharp["variance_ratio"] > 3 and sharp["qualified"] is False


def test_bad_line_exits_2_and_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    lines = events.read_text().splitlines()
    lines[2] = '{"event_id": "broken", "query": '
    events.write_text("\n".join(lines) + "\n")
    out = tmp_path / "q.json"
    assert main(["qualify", "-i", str(events), "--judge", "embedded", "-o", str(out)]) == 2
    assert "line 3" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"overall": "awful"}, "line 1: labels.human.overall"),
        ({"rewrites": "not a list"}, "line 1: labels.rewrites must be a list of strings"),
    ],
)
def test_bad_labels_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], message: str
) -> None:
    row: dict[str, Any] = {"event_id": "x", "query": "q", "response": "r",
                           "labels": {"human": {"overall": True}}}  # fmt: skip
    if "overall" in change:
        row["labels"]["human"].update(change)
    else:
        row["labels"].update(change)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert main(["qualify", "-i", str(path), "-o", str(tmp_path / "q.json")]) == 2
    assert message in capsys.readouterr().err


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    assert main(["qualify", "-i", str(events), "-o", str(tmp_path / "q.txt")]) == 2
    assert main(["qualify", "-i", str(tmp_path / "missing.jsonl"), "-o", "q.json"]) == 2
    unlabelled = tmp_path / "none.jsonl"
    unlabelled.write_text('{"event_id": "a", "query": "q", "response": "r"}\n')
    assert main(["qualify", "-i", str(unlabelled), "-o", str(tmp_path / "q.json")]) == 2
    with pytest.raises(SystemExit) as exc:  # a judge run or scorecards, not both
        main(["qualify", "-i", str(events), "--judge", "embedded", "--scores", "s.jsonl",
              "-o", "q.json"])  # fmt: skip
    assert exc.value.code == 2
