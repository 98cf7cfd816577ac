"""The RAG interaction event (DESIGN.md "The event") and its parsing from raw bytes.

`parse_event` is the one door from bytes to an :class:`Event`: size cap before
parsing, strict UTF-8, JSON, then pydantic validation with the configured caps.
Every failure is an :class:`InvalidEvent` with a short machine reason (used as a
DLQ header and a metric label) and a human detail that names the field.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

import numpy as np
import re2
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic import ValidationInfo as _Info

from stream.contract.reference import Reference, reference_of

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


class EventLimits(BaseModel):
    """Caps enforced on every event (configurable under `limits`)."""

    model_config = ConfigDict(extra="forbid")

    max_event_bytes: int = Field(
        1_000_000, gt=0, description="raw message size cap, checked before parsing"
    )
    max_text_chars: int = Field(
        20_000, gt=0, description="query / response / history message length"
    )
    max_chunk_chars: int = Field(20_000, gt=0, description="one retrieved chunk's content length")
    max_chunks: int = Field(64, gt=0, description="retrieved_context list length")
    max_history: int = Field(64, gt=0, description="history list length")
    max_citations: int = Field(64, gt=0, description="citations list length")
    max_depth: int = Field(32, gt=0, description="JSON nesting depth cap, checked before parsing")


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=False)


class Message(_Part):
    role: str
    content: str


class Case(_Part):
    subject: str | None = None
    description: str | None = None
    metadata: dict[str, Any] | None = None


class Chunk(_Part):
    id: str
    content: str
    source: str | None = None
    score: float | None = None
    policy: Literal["summarize", "quote_only", "no_use"] = "summarize"


class Citation(_Part):
    marker: str | None = None
    source_id: str | None = None
    text: str | None = None


class Usage(_Part):
    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)


class Feedback(_Part):
    thumbs: Literal["up", "down"] | None = None
    rating: float | None = None
    comment: str | None = None


class Event(BaseModel):
    """One answered RAG turn. Unknown fields are kept in `model_extra`."""

    model_config = ConfigDict(extra="allow")

    event_id: str = Field(min_length=1, max_length=256)
    query: str
    response: str
    timestamp: datetime | None = None
    service: str | None = None
    environment: str | None = None
    conversation_id: str | None = None
    turn_index: int | None = Field(None, ge=0)
    history: list[Message] = Field(default_factory=list)
    case: Case | None = None
    retrieved_context: list[Chunk] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    model: str | None = None
    prompt_version: str | None = None
    retriever_version: str | None = None
    latency_ms: float | None = Field(None, ge=0)
    usage: Usage | None = None
    feedback: Feedback | None = None
    labels: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _enforce_list_limits(cls, data: Any, info: _Info) -> Any:
        """List lengths before the items are validated (a 30,000-chunk list costs 0.5 s)."""
        if isinstance(data, dict):
            ctx = info.context if isinstance(info.context, dict) else {}
            limits: EventLimits = ctx.get("limits") or _DEFAULT_LIMITS
            for name, cap in (
                ("retrieved_context", limits.max_chunks),
                ("history", limits.max_history),
                ("citations", limits.max_citations),
            ):
                value = data.get(name)
                if isinstance(value, list):
                    _cap(name, len(value), cap, "items")
        return data

    @model_validator(mode="after")
    def _enforce_limits(self, info: _Info) -> Event:
        ctx = info.context if isinstance(info.context, dict) else {}
        limits: EventLimits = ctx.get("limits") or _DEFAULT_LIMITS
        _cap("query", len(self.query), limits.max_text_chars)
        _cap("response", len(self.response), limits.max_text_chars)
        _cap("retrieved_context", len(self.retrieved_context), limits.max_chunks, "items")
        _cap("history", len(self.history), limits.max_history, "items")
        _cap("citations", len(self.citations), limits.max_citations, "items")
        for i, chunk in enumerate(self.retrieved_context):
            _cap(f"retrieved_context.{i}.content", len(chunk.content), limits.max_chunk_chars)
        for i, msg in enumerate(self.history):
            _cap(f"history.{i}.content", len(msg.content), limits.max_text_chars)
        return self

    @property
    def expected_behavior(self) -> str | None:
        value = (self.labels or {}).get("expected_behavior")
        return value if isinstance(value, str) else None

    @property
    def reference(self) -> Reference | None:
        """The golden/labelled reference in `labels` (:mod:`stream.contract.reference`)."""
        return reference_of(self.labels)


class _TooLarge(ValueError):
    pass


def _cap(field: str, size: int, limit: int, unit: str = "chars") -> None:
    if size > limit:
        raise _TooLarge(f"{field}: {size} {unit} exceeds the cap of {limit}")


_DEFAULT_LIMITS = EventLimits()


class InvalidEvent(Exception):
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
    if fast is not None:
        return fast
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
    bound = encoded.count(b"[") + encoded.count(b"{")
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


#: JSON values only the careful path handles (the fast parser takes them where json.loads
#: with our hooks would not): NaN / Infinity, exponents that may overflow to inf, numbers of
#: 300+ digits. A value always follows ':', ',' or '[' and optional white space; a match
#: inside a string only costs the careful path.
_CAREFUL = re2.compile(
    rb"[:,\[]\s*-?(?:NaN|Infinity|[0-9]{300}|[0-9]+(?:\.[0-9]*)?[eE]\+?[0-9]{3})"
)


def _fast_parse(raw: bytes | str, limits: EventLimits) -> Event | None:
    """The common case in one step: pydantic-core parses the JSON bytes and validates them
    (about half the cost of json.loads + model_validate). Returns None when the event
    needs the careful path: any parse or validation error (the careful path then names
    the exact reason), a nesting depth that may exceed the cap, or a token listed in
    :data:`_CAREFUL`. Both paths accept and reject the same events."""
    if not isinstance(raw, bytes | bytearray):
        return None
    data = bytes(raw)
    if data.count(b"[") + data.count(b"{") > limits.max_depth or _CAREFUL.search(data):
        return None
    try:
        return Event.model_validate_json(data, context={"limits": limits})
    except ValidationError:
        return None


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
