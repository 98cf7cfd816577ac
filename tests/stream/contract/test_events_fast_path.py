"""The fast parse path (msgspec + pydantic-core, `stream.contract.fastparse`) and the
careful path (json.loads + model_validate) accept and reject the same events with the same
result. `parse_event` takes the careful path for `str` input, so comparing bytes against
str input compares the two paths."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stream.contract.events import EventLimits, InvalidEvent, _fast_parse, parse_event
from stream.demo import generate

_BASE = '{"event_id":"e1","query":"q","response":"r"%s}'


def _outcome(raw: bytes | str, limits: EventLimits | None = None) -> tuple[str, Any]:
    try:
        return "ok", parse_event(raw, limits).model_dump(mode="json")
    except InvalidEvent as exc:
        return "invalid", exc.reason


@pytest.mark.parametrize(
    "tail",
    [
        ',"x":NaN',
        ',"x":[1, -Infinity]',
        ',"x":1e999',
        ',"x":{"y":-2.5E+400}',
        ',"latency_ms":1e999',
        ',"x":' + "9" * 320,
        ',"x":' + "9" * 4000,
        ',"x":' + "9" * 5000,
        ',"x":"\\ud800"',
        ',"x":"\\ud83d\\ude00"',
        ',"x":"ids a3e455 and 1e999 in text, NaN too"',
        ',"x":' + "[" * 33 + "1" + "]" * 33,
        ',"x":' + "[" * 30 + "1" + "]" * 30,
        ',"event_id":"dup-wins"',
        ',"turn_index":3.0',
        ',"turn_index":-1',
        ',"timestamp":"2026-11-21T10:00:00Z"',
        ',"timestamp":"yesterday"',
        ',"retrieved_context":[{"id":"c","content":"x","score":"0.5"}]',
        ',"retrieved_context":[{"id":"c","content":"x","policy":"nope"}]',
        ',"usage":{"prompt_tokens":12,"completion_tokens":3.5}',
        ',"labels":{"expected_behavior":"answer","n":1.25e2}',
        ',"history":[{"role":"user","content":"hi","extra":[true,null]}]',
        ',\n"x" :\t 1.5e+308',
        ',"turn_index":true',
        ',"timestamp":1732190000',
        ',"query":123',
        ',"retrieved_context":[{"id":5,"content":"x"}]',
        ',"labels":[]',
        ',"x":"\\u0000"',
    ],
)
def test_both_paths_agree_on_tricky_values(tail: str) -> None:
    text = _BASE % tail
    fast, careful = _outcome(text.encode()), _outcome(text)
    assert fast == careful


def test_both_paths_agree_on_caps() -> None:
    limits = EventLimits(max_chunks=2, max_chunk_chars=10, max_text_chars=50)
    for tail in (
        ',"retrieved_context":[{"id":"a","content":"x"},{"id":"b","content":"y"},'
        '{"id":"c","content":"z"}]',
        ',"retrieved_context":[{"id":"a","content":"' + "x" * 11 + '"}]',
        ',"history":[{"role":"user","content":"' + "h" * 51 + '"}]',
    ):
        text = _BASE % tail
        assert (
            _outcome(text.encode(), limits)
            == _outcome(text, limits)
            == ("invalid", "field_too_large")
        )


def test_invalid_utf8_and_json_keep_their_reasons() -> None:
    assert _outcome(b'{"event_id":"e1","query":"q\xff","response":"r"}') == (
        "invalid",
        "invalid_utf8",
    )
    assert _outcome(b'{"event_id":"e1",') == ("invalid", "invalid_json")
    assert _outcome(b"[1, 2]") == ("invalid", "not_an_object")


def test_generated_traffic_takes_the_fast_path_with_identical_results() -> None:
    limits = EventLimits()
    fast_taken = 0
    for g in generate(400, seed=11):
        if _fast_parse(g.raw, limits) is not None:
            fast_taken += 1
        try:
            text = g.raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:  # a malformed message with no str form: bytes only
            assert g.malformed == "invalid_utf8" and _outcome(g.raw)[0] == "invalid"
            continue
        assert _outcome(g.raw) == _outcome(text)
    assert fast_taken >= 380  # the careful path is the exception (malformed, deep, NaN...)


def test_value_regex_does_not_send_plain_events_to_the_careful_path() -> None:
    raw = json.dumps({"event_id": "e", "query": "q", "response": "r", "trace": "4e544e73"}).encode()
    assert _fast_parse(raw, EventLimits()) is not None
