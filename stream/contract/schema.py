"""The RAG interaction event (DESIGN.md "The event"): the pydantic models and their caps.

:mod:`stream.contract.events` parses raw bytes into these models (`parse_event`); the
validators here enforce the configured :class:`EventLimits` on the careful path, and
:mod:`stream.contract.fastparse` enforces the same caps without running them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationInfo as _Info

from stream.contract.reference import Reference, reference_of

__all__ = [
    "Case",
    "Chunk",
    "Citation",
    "Event",
    "EventLimits",
    "Feedback",
    "Message",
    "Usage",
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
