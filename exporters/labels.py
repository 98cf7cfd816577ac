"""Bounded label values: an allow-list, or the first N distinct values; the rest is 'other'."""

from __future__ import annotations

import threading
from collections.abc import Iterable

__all__ = ["LabelCap"]

OTHER = "other"
UNKNOWN = "unknown"


class LabelCap:
    """Maps free label values onto a bounded set so Prometheus series stay bounded."""

    def __init__(self, max_values: int = 20, allow: Iterable[str] | None = None) -> None:
        self._allow = frozenset(allow) if allow else None
        self._max = max_values
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, value: str | None) -> str:
        if not value:
            return UNKNOWN
        if self._allow is not None:
            return value if value in self._allow else OTHER
        if value in self._seen:
            return value
        with self._lock:
            if len(self._seen) < self._max and len(value) <= 64:
                self._seen.add(value)
                return value
        return OTHER
