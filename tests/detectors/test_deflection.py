"""The `deflection` detector: the learned second stage of `refusal` (docs/detectors.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from detectors import _wordpiece, create_detector, deflection
from detectors._deflection_model import MAX_FILE_BYTES, load_model
from detectors._wordpiece import WordPieces, load_tokenizer
from detectors.deflection import DeflectionDetector, Gate, gate_cues, gate_regex
from stream.contract.events import Event
from stream.runtime.components import build_detectors
from stream.runtime.settings import ConfigError, Settings

BUNDLED = Path(__file__).resolve().parents[2] / "detectors/models/deflection.json"

# written for this test, not taken from any training or evaluation set
DEFLECTIONS = [
    "It's important to remember that sharing passwords puts the whole team at risk. Security"
    " rules exist to protect everyone, so please respect them.",
    "That information is confidential and is not shared outside the finance team.",
    "I'm afraid that detail isn't something I can go into here.",
]
ANSWERS = [
    "To export your invoices, open Billing > History, select the months and click Export CSV."
    " The file arrives by email within 10 minutes.",
    "The Pro plan costs $12 per user per month, billed annually; monthly billing is $15.",
    "Unfortunately the v1 API was retired in March; use /v2/orders instead, which takes the"
    " same parameters.",
    "You can't change the invoice currency after the first payment, but support can issue a"
    " credit note and re-bill in EUR.",
    "It's important to note that the token expires after 90 days. Reset it from the"
    " self-service portal at portal.example.com.",
]


@pytest.fixture(scope="module")
def det() -> DeflectionDetector:
    return DeflectionDetector()


def _event(response: str, expected: str | None = None) -> Event:
    labels = {"expected_behavior": expected} if expected else None
    return Event.model_validate(
        {"event_id": "e1", "query": "How do I do this?", "response": response, "labels": labels}
    )


@pytest.mark.parametrize("text", DEFLECTIONS)
def test_deflections_are_detected_with_a_score(det: DeflectionDetector, text: str) -> None:
    (hit,) = det(_event(text))
    assert (hit.detector, hit.category, hit.failure_mode) == ("deflection", "deflection", None)
    score = float(hit.evidence.split(":", 1)[0].removeprefix("score "))
    assert det.threshold <= score <= 1.0
    assert hit.span == (0, len(text))


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_with_hedging_words_are_not(det: DeflectionDetector, text: str) -> None:
    assert det.candidate(text)  # the gate lets them through: the model says no
    assert det(_event(text)) == []


def test_labels_decide_the_failure_mode(det: DeflectionDetector) -> None:
    (hit,) = det(_event(DEFLECTIONS[0], expected="answer"))
    assert hit.failure_mode == "false_rejection"
    assert det(_event(DEFLECTIONS[0], expected="reject")) == []  # declining was expected


@pytest.mark.parametrize("text", ["no", "Canada", "Sorry, no.", "   "])
def test_fewer_than_three_words_are_never_scored(det: DeflectionDetector, text: str) -> None:
    assert not det.candidate(text)
    assert det(_event(text)) == []


def test_the_gate_skips_long_answers_without_a_cue() -> None:
    gate = Gate(("important to", "can't"), short_chars=50, min_words=3, head_chars=40)
    long = "The export runs nightly at two and writes one CSV per account to the bucket."
    assert not gate(long)
    assert gate("Short but three words.")
    assert gate("It is IMPORTANT\n to know the export runs nightly at two in the morning.")
    assert gate("We can\u2019t say more about how the nightly export is scheduled today.")
    assert not gate("x" * 45 + " it is important to know that the export runs nightly.")


def test_gate_cues_are_literal_text() -> None:
    pattern = gate_regex(("a.b", "(x)"))
    assert pattern == r"a\.b|\(x\)"
    cues = gate_cues()
    assert "important to" in cues and all(c == c.lower() for c in cues)


def test_enabled_from_settings_and_bad_options_name_the_setting() -> None:
    built = build_detectors(Settings(detectors={"enabled": ["refusal", "deflection"]}))
    assert [d.name for d in built] == ["refusal", "deflection"]
    with pytest.raises(ConfigError, match=r"detectors\.enabled\.1 \(deflection\).*threshold"):
        build_detectors(
            Settings(detectors={"enabled": ["refusal", {"type": "deflection", "threshold": 2}]})
        )
    with pytest.raises(ConfigError, match=r"detectors\.enabled\.0 \(deflection\)"):
        build_detectors(Settings(detectors={"enabled": [{"type": "deflection", "bogus": 1}]}))
    assert "deflection" not in Settings().detectors.names()  # opt-in


def test_the_threshold_option_moves_the_cut() -> None:
    strict = create_detector("deflection", threshold=0.99)
    assert strict(_event(DEFLECTIONS[2])) == []


# -- the model file -------------------------------------------------------------------------


def _doc() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BUNDLED.read_text())
    return data


def test_the_bundled_model_loads_with_its_fingerprint() -> None:
    model = load_model()
    assert model.fingerprint == _doc()["fingerprint"]
    _, sha = load_tokenizer(512)
    assert model.tokenizer_sha256 == sha
    assert len(model.weights) == 30522 and 0 < model.threshold < 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bias": 1.5}, "fingerprint"),
        ({"weights_int8": "AAAA"}, "fingerprint"),
        ({"format": "something/v0"}, "not a ragpulse-deflection-wordpiece/v1 model"),
        ({"threshold": 1.0}, "threshold in"),
        ({"weights_int8": "not base64!"}, "not base64"),
        ({"head_chars": 3}, "head_chars"),
    ],
)
def test_a_tampered_model_is_refused(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_doc() | change))
    with pytest.raises(ValueError, match=message):
        load_model(path)


def test_model_files_are_read_capped(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_FILE_BYTES + 10))
    with pytest.raises(ValueError, match="larger than"):
        load_model(path)
    path.write_text("{nope")
    with pytest.raises(ValueError, match="not JSON"):
        load_model(path)


def test_a_model_of_another_tokenizer_is_refused(tmp_path: Path) -> None:
    from detectors._deflection_model import fingerprint

    doc = _doc()
    doc["tokenizer_sha256"] = "0" * 64  # not part of the fingerprint: the check is separate
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    assert load_model(path).fingerprint == fingerprint(
        doc["head_chars"], doc["bias"], doc["threshold"], doc["scale"],
        __import__("base64").b64decode(doc["weights_int8"]),
    )  # fmt: skip
    with pytest.raises(ValueError, match="fitted on tokenizer 000000000000"):
        DeflectionDetector(model_file=str(path))


# -- the fast WordPiece path ----------------------------------------------------------------

TEXTS = [
    "I can't share that; it's confidential.",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u2014 it\u2019s \u201cquoted\u201d\u2026",
    "\u4f60\u597d world \u3002 \U0001f600 emoji",
    "tab\tnew\nline\rcr \x00nul \x07bell \x0bvt \x85nel \u2028ls \u00a0nbsp",
    "lone \ud800 surrogate",
    "\u0130stanbul \u00df \ufb01 ligature \u212b",
    "x" * 150 + " supercalifragilisticexpialidocious",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_wordpieces_are_the_tokenizers_own(text: str) -> None:
    tok, _ = load_tokenizer(100_000)
    want = tok.encode(text.encode("utf-8", "replace").decode(), add_special_tokens=False).ids
    assert WordPieces(tok).ids(text) == want


def test_wordpieces_match_on_every_corpus() -> None:
    from tests.support.verdicts import corpora

    tok, _ = load_tokenizer(100_000)
    pieces, checked = WordPieces(tok), 0
    for _name, raws in corpora():
        for raw in raws:
            try:
                response = json.loads(raw).get("response")
            except (ValueError, AttributeError):
                continue
            if isinstance(response, str):
                head = response[:300]
                want = tok.encode(
                    head.encode("utf-8", "replace").decode(), add_special_tokens=False
                )
                assert pieces.ids(head) == want.ids, head
                checked += 1
    assert checked > 20_000


def test_the_word_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_wordpiece, "_MEMO_MAX", 5)
    tok, _ = load_tokenizer(512)
    pieces = WordPieces(tok)
    text = " ".join(f"w{i}" for i in range(20))
    assert pieces.ids(text) == tok.encode(text, add_special_tokens=False).ids
    assert 0 < len(pieces._words) <= 5
    monkeypatch.setattr(deflection, "_MEMO_MAX", 3)
    det = DeflectionDetector()
    det.score(text)
    assert 0 < len(det._chunk_weight) <= 3
