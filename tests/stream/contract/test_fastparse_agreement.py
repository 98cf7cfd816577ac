"""Property tests: whenever the fast path (msgspec + the stripped pydantic-core validator)
builds an Event, the careful path (json.loads with hooks + `Event.model_validate`) builds an
equal one; whenever the careful path rejects, the fast path declines. Inputs: real events
of the bundled traffic, mutated by a seeded fuzzer (type swaps, missing / extra / duplicate
fields, huge numbers, NaN, unicode escapes, lone surrogates, over-cap lengths and list
sizes, deep nesting, byte damage), and JSON values drawn by hypothesis."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream.contract.events import (
    Event,
    EventLimits,
    InvalidEvent,
    _careful_parse,
    _fast_parse,
    parse_event,
)
from stream.demo import generate

_SMALL = EventLimits(
    max_text_chars=1500, max_chunk_chars=1200, max_chunks=3, max_history=2, max_citations=2,
    max_depth=24,
)  # fmt: skip
_LIMITS = (EventLimits(), _SMALL)


def _check(raw: bytes, limits: EventLimits) -> bool:
    """Asserts the agreement on `raw`; returns whether the fast path built the Event."""
    fast = _fast_parse(raw, limits)
    try:
        careful: Event | None = _careful_parse(raw, limits)
    except InvalidEvent:
        careful = None
    if fast is None:
        return False
    assert careful is not None, raw[:300]
    assert fast == careful
    assert repr(fast) == repr(careful)  # 1 vs 1.0, tz classes: equal is not enough
    assert fast.model_fields_set == careful.model_fields_set
    assert fast.model_extra == careful.model_extra
    assert fast.model_dump_json() == careful.model_dump_json()
    return True


_VALUES: list[Any] = [
    None, True, 0, -1, 3, 2.5, -0.0, 1e308, 10**30, "", "x", "3", "2.5", "true",
    "2026-11-21T10:00:00Z", "2026-11-21", 1732190000, [], {}, [1, "a"], {"k": [None]},
    "é\u2028\x00", "quote_only", "down",
]  # fmt: skip
_TOKENS = [
    "NaN", "-Infinity", "Infinity", "1e999", "-1e400", "1E+308", "9" * 320, "9" * 4400,
    '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"\\u00e9\\n\\t\\"\\\\"', "1.0", "-0",
    "[" * 40 + "]" * 40, "[" * 5 + "]" * 5, "1.7976931348623159e308", "0.1e-400", "true",
]  # fmt: skip
_FIELDS = [
    "event_id", "query", "response", "timestamp", "turn_index", "latency_ms", "labels",
    "retrieved_context", "history", "citations", "case", "usage", "feedback", "model",
]  # fmt: skip
_NESTED = {
    "retrieved_context": ["id", "content", "source", "score", "policy"],
    "history": ["role", "content"],
    "citations": ["marker", "source_id", "text"],
}


def _mutate_value(rng: random.Random, data: dict[str, Any]) -> dict[str, Any]:
    op = rng.randrange(7)
    if op == 0:  # a type swap of a top-level field
        data[rng.choice(_FIELDS)] = rng.choice(_VALUES)
    elif op == 1:  # a missing field
        data.pop(rng.choice(_FIELDS), None)
    elif op == 2:  # an extra field, top level or nested
        target = data
        for name in _NESTED:
            items = data.get(name)
            if isinstance(items, list) and items and rng.random() < 0.3:
                target = rng.choice(items) if isinstance(items[0], dict) else data
        target[f"x{rng.randrange(3)}"] = rng.choice(_VALUES)
    elif op == 3:  # a type swap inside a nested item
        name = rng.choice(list(_NESTED))
        items = data.get(name)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            rng.choice(items)[rng.choice(_NESTED[name])] = rng.choice(_VALUES)
    elif op == 4:  # over-cap texts
        key = rng.choice(["query", "response"])
        data[key] = "w" * rng.choice([1500, 1501, 20_000, 20_001])
        chunks = data.get("retrieved_context")
        for chunk in chunks[:1] if isinstance(chunks, list) else []:
            if isinstance(chunk, dict):
                chunk["content"] = "c" * rng.choice([1200, 1201, 20_000, 20_001])
    elif op == 5:  # list sizes around the caps
        name = rng.choice(list(_NESTED))
        items = data.get(name)
        if not isinstance(items, list) or not items:
            items = [{"id": "a", "content": "b", "role": "r"}]
        data[name] = (items * 70)[: rng.choice([1, 2, 3, 4, 65])]
    else:  # nesting around the depth caps
        depth = rng.choice([3, 20, 23, 24, 30, 31, 40])
        data[rng.choice(["labels", "x"])] = json.loads("[" * depth + "]" * depth)
    return data


def _mutate_text(rng: random.Random, raw: bytes) -> bytes:
    text = raw.decode("utf-8")
    op = rng.randrange(5)
    if op == 0:  # a JSON token the two decoders may read differently, as an extra
        return f'{text[:-1]},"x":{rng.choice(_TOKENS)}}}'.encode()
    if op == 1:  # a duplicate key: the first value is discarded by both decoders
        return f'{{"{rng.choice(["x", "labels"])}":{rng.choice(_TOKENS)},{text[1:]}'.encode()
    if op == 2:  # a known field replaced by a token
        return f'{text[:-1]},"{rng.choice(_FIELDS)}":{rng.choice(_TOKENS)}}}'.encode()
    if op == 3:  # byte damage
        data = bytearray(raw)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    return raw[: rng.randrange(len(raw))]  # truncation


@pytest.mark.parametrize("seed", range(4))
def test_mutated_real_events_agree(seed: int) -> None:
    rng = random.Random(seed)
    fast = 0
    for i, g in enumerate(generate(150, seed=seed + 20)):
        limits = _LIMITS[i % 2]
        for _ in range(4):
            raw = g.raw
            if not g.malformed and rng.random() < 0.6:
                data = json.loads(raw)
                for _ in range(rng.randrange(1, 3)):
                    data = _mutate_value(rng, data)
                raw = json.dumps(data, ensure_ascii=rng.random() < 0.5).encode()
            if not g.malformed and rng.random() < 0.5:
                raw = _mutate_text(rng, raw)
            fast += _check(raw, limits)
    assert fast > 100  # not vacuous: the fast path builds a fair share of them


def test_real_traffic_takes_the_fast_path() -> None:
    limits = EventLimits()
    gens = list(generate(1000, seed=3))
    taken = sum(_check(g.raw, limits) for g in gens)
    # the rest: more than max_depth brackets (strings included), the careful path decides
    assert taken >= 0.98 * sum(1 for g in gens if not g.malformed)
    for g in gens:
        if g.malformed:
            with pytest.raises(InvalidEvent):
                parse_event(g.raw, limits)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fields=st.dictionaries(st.sampled_from([*_FIELDS, "x", "score"]), _JSON, max_size=6),
    ascii_only=st.booleans(),
)
def test_drawn_values_agree(fields: dict[str, Any], ascii_only: bool) -> None:
    data = {"event_id": "e1", "query": "q", "response": "r", **fields}
    raw = json.dumps(data, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    for limits in _LIMITS:
        _check(raw, limits)


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(st.dictionaries(st.sampled_from(_NESTED["retrieved_context"]), _JSON)))
def test_drawn_chunks_agree(chunks: list[dict[str, Any]]) -> None:
    raw = json.dumps({"event_id": "e", "query": "q", "response": "r", "retrieved_context": chunks})
    for limits in _LIMITS:
        _check(raw.encode("utf-8", "surrogatepass"), limits)
