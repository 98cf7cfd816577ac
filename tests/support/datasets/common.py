"""What every adapter shares: the data folder, the split, event assembly and validation."""

from __future__ import annotations

from typing import Any

from stream.contract.events import Event
from tests.support.datasets.sources import DATA, split_of

__all__ = ["DATA", "SPLITS", "chunks", "event", "keep", "split_of", "validate"]

SPLITS = ("dev", "test", "all")


def keep(split: str, wanted: str) -> bool:
    return wanted == "all" or split == wanted


def chunks(prefix: str, texts: list[str]) -> list[dict[str, str]]:
    """One retrieved chunk per passage: ids ``<prefix>-p1``, ``<prefix>-p2``, ..."""
    return [{"id": f"{prefix}-p{n}", "content": t} for n, t in enumerate(texts, 1)]


def event(
    event_id: str,
    query: str,
    response: str,
    context: list[str],
    labels: dict[str, Any],
    **fields: Any,
) -> dict[str, Any]:
    """A ragpulse event dict; `labels` must hold ``dataset``, ``split`` and ``category``."""
    out: dict[str, Any] = {"event_id": event_id, "query": query, "response": response}
    if context:
        out["retrieved_context"] = chunks(event_id, context)
    out.update({k: v for k, v in fields.items() if v is not None})
    out["labels"] = labels
    return out


def validate(raw: dict[str, Any]) -> Event:
    """Parse an adapted event with the default event limits (what `ragpulse` accepts)."""
    return Event.model_validate(raw)
