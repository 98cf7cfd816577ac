"""Thin Python wrapper: the Rust prototype (``ragpulse_source_policy.SourcePolicy``) as a
ragpulse detector.

``RustSourcePolicyDetector(**options)`` takes the same options as
``detectors.source_policy.SourcePolicyDetector`` (validated by building one) and, called on
an Event, returns the same ``Detection`` objects. The Rust side reads the event itself
(``retrieved_context[].policy/content/id`` and ``response``) and returns
``(category, evidence, start, end)`` tuples.

A response or chunk that holds a lone surrogate cannot be read as UTF-8 by the extension;
such an event goes to the Python detector (the parser's lone-surrogate check should keep
them out of the pipeline anyway).

The extension module must be importable: build it with
``sh bench/proto/build.sh rust_source_policy`` (it lands in /tmp/rust_source_policy_build) and
put that folder on ``sys.path`` (measure.py does).
"""

from __future__ import annotations

from typing import Any

import ragpulse_source_policy  # the compiled extension (built by bench/proto/build.sh)

from detectors import Detection
from detectors.source_policy import SourcePolicyDetector
from stream.contract.events import Event

__all__ = ["RustSourcePolicyDetector"]


class RustSourcePolicyDetector:
    """``detectors.source_policy.SourcePolicyDetector`` with its per-event work in Rust."""

    name = "source_policy"

    def __init__(self, **options: Any) -> None:
        self._python = SourcePolicyDetector(**options)  # validates; the rare fallback
        p = self._python
        self.core = ragpulse_source_policy.SourcePolicy(
            p.no_use_ngram,
            p.no_use_overlap_ngram,
            p.no_use_min_overlap,
            p.quote_ngram,
            p.quote_long_ngram,
            p.quote_min_overlap,
            p.min_shared,
            p.reported_min_overlap,
            p.reported_min_words,
        )
        self.fallbacks = 0

    @property
    def categories(self) -> tuple[str, ...]:
        return self._python.categories

    def __call__(self, event: Event) -> list[Detection]:
        try:
            found = self.core.detect(event)
        except UnicodeEncodeError:  # a lone surrogate: not UTF-8, Python decides
            self.fallbacks += 1
            return self._python(event)
        return [
            Detection("source_policy", cat, evidence, (start, end), cat)
            for cat, evidence, start, end in found
        ]
