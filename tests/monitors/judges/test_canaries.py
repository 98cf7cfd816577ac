"""The canary set (untrusted file) and the canary drift monitor."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from monitors.drift.alarms import AlarmPolicy
from monitors.judges.canaries import (
    MAX_FILE_BYTES,
    CanaryError,
    CanaryMonitor,
    CanaryRound,
    load_canaries,
)
from monitors.judges.health_settings import CanarySettings
from stream.contract.errors import RagpulseError

EVENT = {"event_id": "c-1", "query": "q?", "response": "a.", "retrieved_context": []}


def _write(tmp_path: Path, *lines: object, name: str = "My Canaries.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines))
    return path


def test_the_bundled_set_covers_the_default_metrics_with_both_verdicts() -> None:
    canaries = load_canaries()
    assert canaries.name == "default" and len(canaries.turns) == 8
    assert {"faithfulness", "answer_relevance", "context_relevance"} <= set(canaries.metrics())
    for metric in ("faithfulness", "answer_relevance", "context_relevance", "answer_correctness"):
        verdicts = {t.expected[metric] for t in canaries.turns if metric in t.expected}
        assert verdicts == {0.0, 1.0}, metric  # a judge that says "fine" to all disagrees


def test_a_user_file_is_named_after_its_stem_and_fingerprinted(tmp_path: Path) -> None:
    path = _write(tmp_path, {"id": "a", "event": EVENT, "expected": {"faithfulness": 1}})
    canaries = load_canaries(path)
    assert canaries.name == "my_canaries"
    assert len(canaries.fingerprint) == 16 and canaries.turns[0].expected == {"faithfulness": 1.0}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        ({"id": "a", "event": EVENT}, "expected must be"),
        ({"id": "a", "event": EVENT, "expected": {"faithfulness": 1.5}}, "in \\[0, 1\\]"),
        ({"id": "a", "event": EVENT, "expected": {"faithfulness": True}}, "in \\[0, 1\\]"),
        ({"id": "a", "event": {"query": "q"}, "expected": {"x": 1}}, "event:"),
        ({"id": "", "event": EVENT, "expected": {"x": 1}}, "id must be"),
        ({"id": "a", "event": EVENT, "expected": {"x": 1}, "code": "x"}, "is \\{id, event"),
    ],
)
def test_a_bad_line_is_refused_naming_file_and_line(
    tmp_path: Path, line: object, message: str
) -> None:
    good = {"id": "ok", "event": EVENT, "expected": {"faithfulness": 1}}
    path = _write(tmp_path, good, line)
    with pytest.raises(CanaryError, match=f"{path.name}:2: .*{message}"):
        load_canaries(path)


def test_duplicates_oversize_and_missing_files_are_refused(tmp_path: Path) -> None:
    turn = {"id": "a", "event": EVENT, "expected": {"faithfulness": 1}}
    with pytest.raises(CanaryError, match="appears twice"):
        load_canaries(_write(tmp_path, turn, turn))
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(CanaryError, match="larger than"):
        load_canaries(big)
    with pytest.raises(RagpulseError, match=r"nope\.jsonl"):
        load_canaries(tmp_path / "nope.jsonl")
    with pytest.raises(CanaryError, match="no canary turns"):
        load_canaries(_write(tmp_path, "", name="empty.jsonl"))


def _monitor() -> CanaryMonitor:
    return CanaryMonitor(
        "judge-x", CanarySettings().detectors, AlarmPolicy(60, 60, recent_window=6), lambda m: 0.5
    )


def _round(scores: list[tuple[float, float]]) -> CanaryRound:
    r = CanaryRound()
    for got, want in scores:
        r.add("faithfulness", want, got)
    return r


def test_a_steady_noisy_judge_raises_nothing_and_a_shift_is_caught_within_six_rounds() -> None:
    rng = random.Random(3)
    monitor = _monitor()
    truth = [1.0, 0.0, 1.0, 0.0]
    for i in range(300):
        noisy = [(min(1.0, max(0.0, 0.8 * t + 0.1 + rng.gauss(0, 0.08))), t) for t in truth]
        assert monitor.observe(_round(noisy), float(i)) == [], f"false alarm in round {i}"
    for k in range(1, 7):  # the judge now says "fine" to every canary
        alarms = monitor.observe(_round([(0.95, t) for t in truth]), 300.0 + k)
        if alarms:
            break
    assert alarms and alarms[0].state == "raised" and alarms[0].service == "judge:judge-x"
    assert k <= 6 and monitor.active("faithfulness")


def test_a_deterministic_judge_gives_constant_rounds_and_no_alarm() -> None:
    monitor = _monitor()
    for i in range(100):
        assert monitor.observe(_round([(0.9, 1.0), (0.3, 0.0)]), float(i)) == []


def test_round_agreement_uses_the_floor_and_errors_are_not_scores() -> None:
    r = CanaryRound()
    r.add("m", 1.0, 0.9)
    r.add("m", 0.0, 0.6)  # judged fine, expected a failure: disagrees at floor 0.5
    r.add("m", 0.0, None)
    assert r.verdicts("m", 0.5) == (1, 1) and r.verdicts("m", 0.7) == (2, 0)
    assert r.errors == {"m": 1} and r.mean_score("m") == pytest.approx(0.75)


def test_a_bad_detector_option_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="window_size"):
        CanaryMonitor(
            "j", [{"type": "mannwhitney_window", "window_size": 0}], AlarmPolicy(), lambda m: 0.5
        )
