"""The detector extension point: one contract, registered by name.

A detector is pure, synchronous and cheap (no model runtime, no I/O): it runs on every event. It
subclasses :class:`~detectors.scan.Detector`, declares the RE2 patterns it needs
(``patterns``: :class:`~detectors.scan.PatternSpec`, possibly none) and implements
``detect(event, scan)``, which receives the event and the shared scan's answers for its
own patterns. Register one with ``@register_detector("name")`` on a class whose
constructor takes keyword options (config: ``detectors.enabled: [{type: name, ...}]``);
config and Helm values then name it by string. docs/detectors.md has a plugin example.

A class in the older shape (a ``__call__(event)`` and ``categories``, no ``detect``) still
builds, through :func:`adapt`, with a deprecation warning; it will be refused in a later
release.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from detectors.detection import EVIDENCE_MAX_CHARS, Detection
from detectors.scan import Detector, PatternSpec, Scan
from stream.contract.events import Event
from stream.contract.registry import Registry

__all__ = [
    "EVIDENCE_MAX_CHARS",
    "Detection",
    "Detector",
    "adapt",
    "available_detectors",
    "create_detector",
    "register_detector",
]

log = logging.getLogger(__name__)

_REGISTRY: Registry[Any] = Registry("detector")

#: class decorator: register a detector factory under a name (config ``detectors.enabled``)
register_detector = _REGISTRY.register
available_detectors = _REGISTRY.available


class _CallableDetector(Detector):
    """A detector in the deprecated shape (``__call__(event)``), behind the one contract."""

    patterns: tuple[PatternSpec, ...] = ()

    def __init__(self, name: str, inner: Any) -> None:
        self.name = name  # type: ignore[misc]
        self.inner = inner

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(self.inner.categories)

    def detect(self, event: Event, scan: Scan) -> list[Detection]:
        found: list[Detection] = self.inner(event)
        return found


def adapt(name: str, obj: Any) -> Detector:
    """`obj` as a :class:`Detector`: itself, or an old-shape callable wrapped (warned)."""
    if isinstance(obj, Detector):
        return obj
    if callable(obj) and hasattr(obj, "categories"):
        message = (
            f"detector {name!r} uses the deprecated __call__(event) contract: subclass"
            " detectors.Detector and implement detect(event, scan) (docs/detectors.md)"
        )
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        log.warning("%s", message)
        return _CallableDetector(name, obj)
    raise TypeError(f"detector {name!r} is not a detectors.Detector")


def create_detector(name: str, **options: Any) -> Detector:
    """The registered detector `name` built with `options` (ValueError naming a bad one)."""
    return adapt(name, _REGISTRY.create(name, **options))
