"""`ragpulse weights fit` end to end on files: scorecards and the embedded judge, the JSON
document, the settings snippet on stdout, bad input (the real CLI entry point)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stream.cli import main
from tests.stream.commands.test_qualify_cli import write_labelled, write_scorecards

KEYS = {"format", "weights", "auc", "n", "n_good", "n_bad", "folds", "metrics", "input"}


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _snippet(weights: dict[str, float]) -> str:
    body = "".join(f"      {m}: {w:.3f}\n" for m, w in weights.items())
    return "judge:\n  compound:\n    weights:\n" + body


def test_fit_from_scorecards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    scores = write_scorecards(tmp_path / "s.jsonl", events)
    cards = scores.read_text().splitlines()  # e5 loses `flat`; e7 gains a rare metric
    for n, line in enumerate(cards[:-1]):
        card = json.loads(line)
        if card["event_id"] == "e5":
            del card["metrics"]["flat"]
        if card["event_id"] == "e7":
            card["metrics"]["rare"] = {"status": "scored", "score": 0.5, "judge": "j"}
        cards[n] = json.dumps(card)
    scores.write_text("\n".join(cards) + "\n")
    out = tmp_path / "w.json"
    args = ["weights", "fit", "-i", str(events), "--scores", str(scores), "--bootstrap", "200"]
    assert main([*args, "-o", str(out)]) == 0
    doc = _json(out)
    assert set(doc) == KEYS and doc["format"] == "ragpulse-weights/1"
    assert doc["metrics"] == ["flat", "sharp"]  # `rare` is on < 80 % of the rows
    assert (doc["n"], doc["n_good"], doc["n_bad"], doc["folds"]) == (39, 20, 19, 5)
    w = doc["weights"]
    assert w["sharp"] > w["flat"] >= 0 and sum(w.values()) == pytest.approx(1.0)
    auc = doc["auc"]
    assert set(auc) == {"compound", "mean", "compound_ci", "mean_ci"}
    assert auc["compound"] > 0.95 and auc["compound"] >= auc["mean"]
    assert auc["compound_ci"][0] <= auc["compound"] <= auc["compound_ci"][1]
    assert auc["mean_ci"][0] <= auc["mean"] <= auc["mean_ci"][1]
    captured = capsys.readouterr()
    assert captured.out == _snippet(w)
    assert "1 labelled rows left out" in captured.err and "3 events without" in captured.err
    # seeded: the same document again
    assert main([*args, "-o", str(tmp_path / "again.json")]) == 0
    assert _json(tmp_path / "again.json") == doc


def test_fit_with_the_embedded_judge_and_chosen_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    out = tmp_path / "w.json"
    rc = main(["weights", "fit", "-i", str(events), "--judge", "embedded", "--metrics",
               "faithfulness,answer_relevance", "--folds", "4", "--bootstrap", "100",
               "-o", str(out)])  # fmt: skip
    assert rc == 0
    doc = _json(out)
    assert set(doc) == KEYS and doc["metrics"] == ["faithfulness", "answer_relevance"]
    assert doc["n"] == 40 and doc["folds"] == 4
    assert list(doc["weights"]) == ["faithfulness", "answer_relevance"]
    assert doc["weights"]["faithfulness"] > 0.5 and sum(doc["weights"].values()) == 1.0
    assert doc["auc"]["compound"] > 0.8
    assert capsys.readouterr().out == _snippet(doc["weights"])


def test_no_separating_metric_falls_back_to_equal_weights(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    scores = write_scorecards(tmp_path / "s.jsonl", events)
    reversed_ = scores.read_text().replace('"sharp"', '"sharp_rev"')
    lines = []
    for line in reversed_.splitlines():
        card = json.loads(line)
        for outcome in (card.get("metrics") or {}).values():
            outcome["score"] = 1.0 - outcome["score"]  # higher = worse on both metrics
        lines.append(json.dumps(card))
    scores.write_text("\n".join(lines) + "\n")
    out = tmp_path / "w.json"
    args = ["weights", "fit", "-i", str(events), "--scores", str(scores), "--metrics", "sharp_rev"]
    assert main([*args, "--bootstrap", "0", "-o", str(out)]) == 0
    doc = _json(out)
    assert doc["weights"] == {"sharp_rev": 1.0} and "equal weights" in doc["note"]
    assert doc["auc"]["compound_ci"] is None and doc["auc"]["compound"] < 0.1
    assert "equal weights" in capsys.readouterr().err


def test_bad_input_exits_2_and_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = write_labelled(tmp_path / "lab.jsonl")
    scores = write_scorecards(tmp_path / "s.jsonl", events)
    out = tmp_path / "w.json"
    base = ["weights", "fit", "-i", str(events), "--scores", str(scores), "-o", str(out)]
    assert main([*base, "--metrics", "sharp,nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main([*base, "--folds", "25"]) == 2  # 20 good, 20 bad rows
    assert "25 folds need" in capsys.readouterr().err
    lines = events.read_text().splitlines()
    lines[6] = "not json"
    events.write_text("\n".join(lines) + "\n")
    assert main(base) == 2
    assert "line 7" in capsys.readouterr().err and not out.exists()
    with pytest.raises(SystemExit):
        main(["weights", "fit", "-i", str(events), "--folds", "1", "-o", str(out)])
