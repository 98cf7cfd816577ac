"""The detector extension point: a callable over an Event, registered by name.

A detector is pure, synchronous and cheap (no model, no I/O): it runs on every
event. Register one with ``@register_detector("name")`` on a class whose
constructor takes keyword options (from config ``detectors.options.<name>``);
config and Helm values then name it by string.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from stream.contract.events import Event
from stream.contract.registry import Registry

__all__ = [
    "Detection",
    "Detector",
    "available_detectors",
    "create_detector",
    "register_detector",
    "run_detectors",
]

EVIDENCE_MAX_CHARS = 160


@dataclass(frozen=True, slots=True)
class Detection:
    """One finding. `span` indexes the response text (characters), when there is one."""

    detector: str
    category: str
    evidence: str
    span: tuple[int, int] | None = None
    failure_mode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "category": self.category,
            "evidence": self.evidence[:EVIDENCE_MAX_CHARS],
            "span": list(self.span) if self.span is not None else None,
            "failure_mode": self.failure_mode,
        }


@runtime_checkable
class Detector(Protocol):
    """What the pipeline calls. `categories` bounds the `category` label values."""

    name: str

    @property
    def categories(self) -> tuple[str, ...]: ...

    def __call__(self, event: Event) -> list[Detection]: ...


_REGISTRY: Registry[Detector] = Registry("detector")

#: class decorator: register a detector factory under a name (config ``detectors.enabled``)
register_detector = _REGISTRY.register
available_detectors = _REGISTRY.available
create_detector = _REGISTRY.create


def run_detectors(detectors: Iterable[Detector], event: Event) -> list[Detection]:
    found: list[Detection] = []
    for detector in detectors:
        found.extend(detector(event))
    return found
