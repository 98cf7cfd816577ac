"""Hostile input: every message ends as a scored event or a dead-letter reason.

Property tests (hypothesis) over raw bytes, arbitrary JSON, the event schema with wrong
types and mutated real events, plus explicit worst cases (10 MB fields, huge lists,
deep nesting, 100 KB of near-matches for each detector). Each one: no exception out of
`Pipeline.process`, an outcome of `scored` (strict-JSON scorecard) or `invalid` with a
known reason, under 1 s, and bounded allocation.

CI time is bounded by the `FAULTS` profile: `RAGPULSE_HYPOTHESIS_EXAMPLES` examples per
property (default 150), an explicit 1 s deadline per example, no example database.
"""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporters import PromFamilies
from stream.contract.events import Event, InvalidEvent
from stream.demo import generate
from stream.runtime.pipeline import Pipeline, Result
from stream.runtime.settings import load_settings

EXAMPLES = int(os.environ.get("RAGPULSE_HYPOTHESIS_EXAMPLES", "150"))
settings.register_profile(
    "ragpulse-faults",
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=1),  # the per-event bound, enforced by hypothesis too
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FAULTS = settings.get_profile("ragpulse-faults")
PER_EVENT_S = 1.0
TRIED: Counter[str] = Counter()

_PIPELINE = Pipeline(load_settings(), PromFamilies())


@pytest.fixture(scope="module", autouse=True)
def _report_count() -> Iterator[None]:
    yield
    print(f"\nhostile inputs tried: {sum(TRIED.values())} {dict(TRIED)}")


def _strict(text: str) -> Any:
    def no_constant(name: str) -> None:
        raise AssertionError(f"scorecard holds {name}")

    return json.loads(text, parse_constant=no_constant)


def check(raw: bytes | str, kind: str) -> Result:
    TRIED[kind] += 1
    started = time.perf_counter()
    result = _PIPELINE.process(raw)
    if result.outcome == "scored":
        card = _strict(result.scorecard_bytes().decode("utf-8"))  # what the sidecar sends
        assert card["event_id"] == result.event_id
    elapsed = time.perf_counter() - started
    assert elapsed < PER_EVENT_S, f"{kind}: {elapsed:.2f}s"
    if result.outcome == "invalid":
        assert result.reason in InvalidEvent.REASONS, result.reason
        assert result.detail
    else:
        assert result.outcome in ("scored", "duplicate")
    return result


# ------------------------------------------------------------------ property tests
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40,
)
hostile_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=2000),
    st.sampled_from(["\x00", "\x00" * 1000, "\ud800", "a\u202eb", "\ufeff", "\\u0000"]),
    st.builds(lambda s, n: s * n, st.sampled_from(["@", "[1]", "4111 ", "+1 555 ", ". "]),
              st.integers(1, 4000)),
)  # fmt: skip
wrong_types = st.one_of(st.integers(), st.floats(), st.booleans(), st.none(), json_values)


@FAULTS
@given(st.binary(max_size=4096))
def test_raw_bytes(raw: bytes) -> None:
    check(raw, "raw_bytes")


@FAULTS
@given(json_values)
def test_any_json_value(value: Any) -> None:
    check(json.dumps(value).encode(), "json_value")


@FAULTS
@given(
    st.fixed_dictionaries(
        {"event_id": st.one_of(st.text(min_size=1, max_size=300), wrong_types)},
        optional={
            "query": st.one_of(hostile_text, wrong_types),
            "response": st.one_of(hostile_text, wrong_types),
            "service": st.one_of(hostile_text, wrong_types),
            "timestamp": st.one_of(st.text(max_size=40), wrong_types),
            "turn_index": wrong_types,
            "latency_ms": wrong_types,
            "retrieved_context": st.lists(
                st.fixed_dictionaries({"id": st.one_of(st.text(), wrong_types)},
                                      optional={"content": hostile_text, "policy": st.text()}),
                max_size=80),
            "history": st.one_of(st.lists(json_values, max_size=5), wrong_types),
            "citations": st.one_of(st.lists(json_values, max_size=5), wrong_types),
            "labels": wrong_types,
            "usage": wrong_types,
        },
    )
)  # fmt: skip
def test_event_schema_with_wrong_types(event: dict[str, Any]) -> None:
    check(json.dumps(event).encode(), "schema")


_REAL = [g.raw for g in generate(64, seed=5, malformed_rate=0.0)]


@FAULTS
@given(
    st.sampled_from(_REAL),
    st.lists(st.tuples(st.integers(0, 10**6), st.binary(max_size=8)), min_size=1, max_size=6),
    st.integers(0, 10**6),
)
def test_mutated_real_events(raw: bytes, edits: list[tuple[int, bytes]], cut: int) -> None:
    data = bytearray(raw)
    for pos, patch in edits:
        pos %= len(data) + 1
        data[pos : pos + len(patch)] = patch
    check(bytes(data[: max(1, cut % (len(data) + 1))]), "mutated")
    check(bytes(data), "mutated")


# ------------------------------------------------------------------ worst cases
def _event(**fields: Any) -> dict[str, Any]:
    return {"event_id": f"w-{TRIED.total()}", "query": "q", "response": "r", **fields}


@pytest.mark.parametrize("size_mb", [10])
def test_10mb_field_is_rejected_before_parsing_with_bounded_memory(size_mb: int) -> None:
    raw = json.dumps(_event(response="x" * (size_mb * 1_000_000))).encode()
    tracemalloc.start()
    try:
        result = check(raw, "10MB")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (result.outcome, result.reason) == ("invalid", "oversized")
    assert peak < len(raw) // 100  # nothing copied, decoded or parsed


def test_field_just_under_the_raw_cap_allocates_a_few_times_its_size() -> None:
    raw = json.dumps(_event(response="y" * 990_000)).encode()
    tracemalloc.start()
    try:
        result = check(raw, "1MB")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.reason == "field_too_large"
    assert peak < 8 * len(raw), peak


@pytest.mark.parametrize(
    "raw, reason",
    [
        (json.dumps(_event(retrieved_context=[{"id": "a", "content": ""}] * 30_000)).encode(),
         "field_too_large"),
        (json.dumps(_event(history=[{"role": "user", "content": ""}] * 30_000)).encode(),
         "field_too_large"),
        (b'{"event_id":"d","query":"q","response":"r","x":' + b'{"a":' * 900 + b"1"
         + b"}" * 900 + b"}", "too_deep"),
        (b"[" * 450_000 + b"]" * 450_000, "too_deep"),
        (b'{"event_id":"n","query":"q","response":"r","x":' + b"9" * 5000 + b"}",
         "invalid_json"),
        (b'{"event_id":"n","query":"q","response":"r","x":NaN}', "invalid_json"),
        (b'{"event_id":"n","query":"q","response":"r","latency_ms":1e999}', "invalid_json"),
        (b'{"event_id":"u","query":"\xff\xfe","response":"r"}', "invalid_utf8"),
        (b'{"event_id":"u","query":"\\ud800","response":"r"}', "invalid_utf8"),
        (b'{"event_id":7,"query":"q","response":"r"}', "invalid_event"),
        (b'{"event_id":"t","query":["q"],"response":{"r":1}}', "invalid_event"),
    ],
)  # fmt: skip
def test_worst_cases_end_in_a_reason(raw: bytes, reason: str) -> None:
    result = check(raw, "worst_case")
    assert (result.outcome, result.reason) == ("invalid", reason), result.detail


NEAR_MATCHES = {  # text that keeps each detector's patterns almost matching
    "pii": ["a.b@c", "+1 (555) 555-55 ", "4111 1111 1111 111 ", "DE89 3704 0044 0532 01 ",
            "123-45-678 "],
    "refusal": ["I'm sorry but I can ", "I cannot not ", "As an AI "],
    "citations": ["[1][[2] [source: ", "[^", "【"],
    "identifiers": ["INV-2024-000 ", "PO#", "v1.2."],
    "policy": ["you should buy ", "guaranteed ret", "will rise by "],
    "source_policy": ['"', "according to the ", "verbatim quote "],
}  # fmt: skip


@pytest.mark.parametrize("detector", sorted(NEAR_MATCHES))
def test_100kb_of_near_matches_per_detector_stays_under_a_second(detector: str) -> None:
    limits = load_settings().limits.model_copy(update={"max_text_chars": 200_000,
                                                       "max_chunk_chars": 200_000})  # fmt: skip
    det = next(d for d in _PIPELINE.detectors if d.name == detector)
    for unit in NEAR_MATCHES[detector]:
        text = (unit * (100_000 // len(unit) + 1))[:100_000]
        event = Event.model_validate(
            _event(query=text, response=text,
                   retrieved_context=[{"id": "c1", "content": text, "policy": "quote_only"}],
                   citations=[{"marker": "[1]", "source_id": "c1", "text": text[:5000]}]),
            context={"limits": limits},
        )  # fmt: skip
        TRIED["near_match"] += 1
        started = time.perf_counter()
        det(event)
        assert time.perf_counter() - started < PER_EVENT_S, (detector, unit)
    # and through the whole pipeline at the real caps (each text field at its 20,000 cap)
    for unit in NEAR_MATCHES[detector]:
        text = (unit * (20_000 // len(unit) + 1))[:20_000]
        chunks = [{"id": f"c{i}", "content": text} for i in range(40)]
        check(json.dumps(_event(query=text, response=text, retrieved_context=chunks)).encode(),
              "near_match_pipeline")  # fmt: skip
