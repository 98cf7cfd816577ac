from __future__ import annotations

import json

import pytest

from stream.contract.events import Event, EventLimits, InvalidEvent, parse_event


def _event(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "event_id": "e1",
        "query": "What was Q2 revenue?",
        "response": "Revenue was $2.1B [1].",
        "timestamp": "2026-11-21T10:00:00Z",
        "retrieved_context": [
            {"id": "c1", "content": "Q2 revenue was $2.1B.", "policy": "quote_only"}
        ],
        "citations": [{"marker": "[1]", "source_id": "c1"}],
        "trace_id": "abc",
    }
    base.update(over)
    return base


def test_valid_event_keeps_unknown_fields_and_parses_timestamp() -> None:
    ev = parse_event(json.dumps(_event()).encode())
    assert ev.model_extra == {"trace_id": "abc"}
    assert ev.timestamp is not None and ev.timestamp.year == 2026
    assert ev.retrieved_context[0].policy == "quote_only"
    assert ev.citations[0].source_id == "c1"


def test_chunk_policy_defaults_to_summarize() -> None:
    ev = Event.model_validate(_event(retrieved_context=[{"id": "c", "content": "x"}]))
    assert ev.retrieved_context[0].policy == "summarize"


@pytest.mark.parametrize(
    ("raw", "reason", "names"),
    [
        (b"{not json", "invalid_json", ""),
        (b"\xff\xfe{}", "invalid_utf8", "byte 0"),
        (b"[1, 2]", "not_an_object", "list"),
        (json.dumps({"event_id": "x", "query": "q"}).encode(), "invalid_event", "response"),
        (json.dumps(_event(query=42)).encode(), "invalid_event", "query"),
        (
            json.dumps(_event(retrieved_context="oops")).encode(),
            "invalid_event",
            "retrieved_context",
        ),
        (json.dumps(_event(timestamp="yesterday")).encode(), "invalid_event", "timestamp"),
        (json.dumps(_event(response="x" * 20_001)).encode(), "field_too_large", "response"),
    ],
)
def test_invalid_events_have_reason_and_name_the_field(raw: bytes, reason: str, names: str) -> None:
    with pytest.raises(InvalidEvent) as info:
        parse_event(raw)
    assert info.value.reason == reason
    assert names in info.value.detail


def test_caps_are_configurable_and_checked_before_parsing() -> None:
    limits = EventLimits(max_event_bytes=100, max_chunks=1)
    with pytest.raises(InvalidEvent) as info:
        parse_event(b"x" * 101, limits)
    assert info.value.reason == "oversized"
    two = _event(retrieved_context=[{"id": "a", "content": "x"}, {"id": "b", "content": "y"}])
    with pytest.raises(InvalidEvent) as info:
        parse_event(json.dumps(two).encode(), EventLimits(max_chunks=1))
    assert info.value.reason == "field_too_large"
    assert "retrieved_context: 2 items exceeds the cap of 1" in info.value.detail


def test_deeply_nested_json_is_invalid_not_a_crash() -> None:
    raw = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(InvalidEvent) as info:
        parse_event(raw, EventLimits(max_event_bytes=1_000_000))
    assert info.value.reason == "too_deep"  # the depth cap, checked before json.loads
