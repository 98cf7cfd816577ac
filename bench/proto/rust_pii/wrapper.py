"""Thin Python wrapper: the Rust prototype (``ragpulse_pii.Pii``) as a ragpulse detector.

``RustPiiDetector(categories=..., ignore_if_in_context=...)`` takes the same options as
``detectors.pii.PiiDetector`` and, called on an Event, returns the same ``Detection``
objects. The Rust side reads the event itself (``event.response``; the query, history,
case fields, retrieved chunks and citations only when a response value must be looked up
for ``ignore_if_in_context``) and returns ``(category, evidence, start, end)`` tuples.

The extension module must be importable: build it with ``sh bench/proto/build.sh rust_pii``
(it lands in /tmp/rust_pii_build) and put that folder on ``sys.path`` (measure.py does).
"""

from __future__ import annotations

from collections.abc import Sequence

import ragpulse_pii  # the compiled extension (built by bench/proto/build.sh)

from detectors import Detection
from stream.contract.events import Event

__all__ = ["RustPiiDetector"]


class RustPiiDetector:
    """``detectors.pii.PiiDetector`` with its per-event work in Rust."""

    name = "pii"

    def __init__(
        self,
        *,
        categories: Sequence[str] | None = None,
        ignore_if_in_context: bool = True,
        screen: str = "set",
        set_dfa_size_limit: int = 64 << 20,
        set_reset_every: int = 10_000,
    ) -> None:
        # screen (which patterns search a text; never changes an answer): "set" (one
        # RegexSet pass, RE2's Set in detectors/scan.py; its lazy-DFA cache is
        # set_dfa_size_limit: see src/lib.rs on regex 1.7's permanent fallback to the
        # slow engine after 3 cache flushes; set_reset_every=N renews that cache every N
        # texts, 0 never), "counts" (one byte pass: digit count, '@', '+' against each
        # pattern's necessary condition), "none" (every pattern searches every text)
        wanted = None if categories is None else list(categories)
        self.core = ragpulse_pii.Pii(
            wanted, ignore_if_in_context, screen, set_dfa_size_limit, set_reset_every
        )
        self.ignore_if_in_context = ignore_if_in_context

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(self.core.categories)

    def find(self, text: str) -> list[tuple[str, int, int, str, str]]:
        """``PiiDetector.find(text)``: (category, start, end, key, evidence), by position."""
        return self.core.find(text)

    def __call__(self, event: Event) -> list[Detection]:
        return [
            Detection("pii", cat, evidence, (start, end), "pii_leak")
            for cat, evidence, start, end in self.core.detect(event)
        ]
