"""Per-turn rule detectors: pure, synchronous, no model; one module per family.

Importing this package registers the built-in detectors by name.
"""

from detectors import citations, identifiers, pii, policy, refusal, source_policy
from detectors.base import (
    Detection,
    Detector,
    available_detectors,
    create_detector,
    register_detector,
    run_detectors,
)

__all__ = [
    "Detection",
    "Detector",
    "available_detectors",
    "citations",
    "create_detector",
    "identifiers",
    "pii",
    "policy",
    "refusal",
    "register_detector",
    "run_detectors",
    "source_policy",
]
