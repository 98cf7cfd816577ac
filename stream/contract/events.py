"""Parsing raw bytes into the RAG interaction event (DESIGN.md "The event").

`parse_event` is the one door from bytes to an :class:`Event`: size cap before
parsing, strict UTF-8, JSON, then validation with the configured caps. Two paths: the
fast one (:mod:`stream.contract.fastparse`: msgspec's strict decoder, then pydantic-core
without the two Python validators that enforce the caps) takes the common case; whatever
it does not build takes the careful one here (json.loads with hooks, a depth scan, a
lone-surrogate check, `model_validate`), which names the exact reason. Every failure is
an :class:`InvalidEvent` with a short machine reason (used as a DLQ header and a metric
label) and a human detail that names the field. The models live in
:mod:`stream.contract.schema` and are re-exported here.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from pydantic import ValidationError

from stream.contract.errors import RagpulseError
from stream.contract.fastparse import brackets, fast_parse
from stream.contract.schema import (
    _DEFAULT_LIMITS,
    Case,
    Chunk,
    Citation,
    Event,
    EventLimits,
    Feedback,
    Message,
    Usage,
)

__all__ = [
    "Case",
    "Chunk",
    "Citation",
    "Event",
    "EventLimits",
    "Feedback",
    "InvalidEvent",
    "Message",
    "Usage",
    "parse_event",
]


class InvalidEvent(RagpulseError):
    """An event that cannot be processed; `reason` is a bounded machine code."""

    REASONS = (
        "null_value",
        "empty_value",
        "undecodable_batch",
        "oversized",
        "invalid_utf8",
        "invalid_json",
        "not_an_object",
        "invalid_event",
        "field_too_large",
        "too_deep",
    )

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def parse_event(raw: bytes | str | None, limits: EventLimits | None = None) -> Event:
    """Parse one raw message into an Event or raise InvalidEvent.

    A null value (a Kafka tombstone) and an empty value are invalid events with their own
    reasons, not crashes: a topic may carry either whatever its producer intends."""
    limits = limits or _DEFAULT_LIMITS
    if raw is None:
        raise InvalidEvent("null_value", "the record value is null (a tombstone)")
    if not raw:
        raise InvalidEvent("empty_value", "the record value is empty")
    if len(raw) > limits.max_event_bytes:
        raise InvalidEvent(
            "oversized", f"event is {len(raw)} bytes, cap is {limits.max_event_bytes}"
        )
    fast = _fast_parse(raw, limits)
    return fast if fast is not None else _careful_parse(raw, limits)


def _careful_parse(raw: bytes | bytearray | str, limits: EventLimits) -> Event:
    """json.loads with hooks, a depth scan and a lone-surrogate check, then
    `model_validate`: slower than the fast path, and every rejection names its reason."""
    if isinstance(raw, bytes | bytearray):
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidEvent("invalid_utf8", f"byte {exc.start}: {exc.reason}") from None
    else:
        text = raw
    encoded = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    # every bracket counted (strings too) bounds the depth: the vectorised scan (~120 us on
    # a 7 KB event) only runs when that bound exceeds the cap
    bound = brackets(encoded)
    depth = _json_depth(encoded) if bound > limits.max_depth else 0
    if depth > limits.max_depth:
        cap = limits.max_depth
        raise InvalidEvent("too_deep", f"nesting depth {depth} exceeds the cap of {cap}")
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:  # ValueError: also > 4300-digit integers
        raise InvalidEvent("invalid_json", str(exc)[:200]) from None
    if not isinstance(data, dict):
        raise InvalidEvent(
            "not_an_object", f"top level is {type(data).__name__}, expected an object"
        )
    if "\\ud" in text or "\\uD" in text:  # only escapes can smuggle in lone surrogates
        _reject_lone_surrogates(data, "")
    try:
        return Event.model_validate(data, context={"limits": limits})
    except ValidationError as exc:
        raise _invalid_from(exc) from None


def _fast_parse(raw: bytes | bytearray | str, limits: EventLimits) -> Event | None:
    """The fast path (:func:`stream.contract.fastparse.fast_parse`) for bytes; None when
    the careful path decides (always for `str` input)."""
    if not isinstance(raw, bytes | bytearray):
        return None
    return fast_parse(raw, limits)


_QUOTE, _BACKSLASH = ord('"'), ord("\\")


def _no_constant(name: str) -> float:
    """NaN / Infinity are not JSON (scorecards must stay strict JSON for every consumer)."""
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _json_depth(data: bytes) -> int:
    """Deepest bracket nesting outside string literals, vectorised (a few ms per MB), so it
    runs before json.loads, whose recursion would otherwise be the only limit. UTF-8
    multi-byte sequences never contain ASCII bytes, so scanning bytes is exact."""
    if b"[" not in data and b"{" not in data:
        return 0
    b = np.frombuffer(data, dtype=np.uint8)
    quotes = b == _QUOTE
    if b"\\" in data:  # a quote is escaped when an odd run of backslashes precedes it
        pos = np.arange(b.size, dtype=np.int32)
        last_plain = np.maximum.accumulate(np.where(b != _BACKSLASH, pos, -1))
        run_before = np.zeros_like(pos)
        run_before[1:] = pos[:-1] - last_plain[:-1]
        quotes &= run_before % 2 == 0
    outside = np.cumsum(quotes, dtype=np.int32) % 2 == 0
    steps = np.zeros(b.size, dtype=np.int32)
    steps[outside & ((b == ord("[")) | (b == ord("{")))] = 1
    steps[outside & ((b == ord("]")) | (b == ord("}")))] = -1
    return int(np.cumsum(steps, dtype=np.int32).max())


def _reject_lone_surrogates(value: Any, path: str) -> None:
    """Strings that cannot be encoded as UTF-8 (an escaped lone surrogate like \\ud800)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            where = path or "<event>"
            raise InvalidEvent("invalid_utf8", f"{where}: lone surrogate at {exc.start}") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _reject_lone_surrogates(key, path)
            _reject_lone_surrogates(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _reject_lone_surrogates(item, f"{path}.{i}")


def _invalid_from(exc: ValidationError) -> InvalidEvent:
    parts: list[str] = []
    too_large = False
    for err in exc.errors(include_url=False, include_input=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if "exceeds the cap" in msg:
            too_large = True
            msg = msg.removeprefix("Value error, ")
            parts.append(msg)
        else:
            parts.append(f"{loc or '<event>'}: {msg}")
    return InvalidEvent("field_too_large" if too_large else "invalid_event", "; ".join(parts))
