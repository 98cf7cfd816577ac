"""The detector extension point: a callable over an Event, registered by name.

A detector is pure, synchronous and cheap (no model, no I/O): it runs on every
event. Register one with ``@register_detector("name")`` on a class whose
constructor takes keyword options (from config ``detectors.options.<name>``);
config and Helm values then name it by string.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from stream.events import Event

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


T = TypeVar("T")
_REGISTRY: dict[str, Callable[..., Detector]] = {}


def register_detector(name: str) -> Callable[[type[T]], type[T]]:
    """Class decorator: register a detector factory under `name`."""

    def wrap(cls: type[T]) -> type[T]:
        if name in _REGISTRY:
            raise ValueError(f"detector {name!r} is already registered")
        cls.name = name  # type: ignore[attr-defined]
        _REGISTRY[name] = cls  # type: ignore[assignment]
        return cls

    return wrap


def available_detectors() -> list[str]:
    return sorted(_REGISTRY)


def create_detector(name: str, **options: Any) -> Detector:
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown detector {name!r}; available: {', '.join(available_detectors())}"
        ) from None
    try:
        return factory(**options)
    except TypeError as exc:
        raise ValueError(f"detector {name!r}: bad options {sorted(options)}: {exc}") from None


def run_detectors(detectors: Iterable[Detector], event: Event) -> list[Detection]:
    found: list[Detection] = []
    for detector in detectors:
        found.extend(detector(event))
    return found
