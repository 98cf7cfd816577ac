"""Per-turn detectors: pure, synchronous, no model runtime; one module per family.

One contract (:class:`Detector`: declared patterns, ``detect(event, scan)``), one registry
(``@register_detector``). Importing this package registers the built-in detectors by name:
the rule detectors, and ``deflection``, a frozen linear model over WordPiece tokens (data
in ``models/``), opt-in.
"""

from detectors import (
    citations,
    deflection,
    identifiers,
    pii,
    policy,
    refusal,
    scan,
    source_policy,
)
from detectors.base import (
    Detection,
    Detector,
    adapt,
    available_detectors,
    create_detector,
    register_detector,
)
from detectors.scan import PatternDetector, PatternSpec, Scan, Scanner

__all__ = [
    "Detection",
    "Detector",
    "PatternDetector",
    "PatternSpec",
    "Scan",
    "Scanner",
    "adapt",
    "available_detectors",
    "citations",
    "create_detector",
    "deflection",
    "identifiers",
    "pii",
    "policy",
    "refusal",
    "register_detector",
    "scan",
    "source_policy",
]
