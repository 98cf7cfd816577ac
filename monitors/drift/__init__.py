"""Drift detectors for monitored metric streams, registered by name.

Importing this package registers the built-ins: ``adwin``, ``page_hinkley``,
``ks_window``, ``mannwhitney_window`` and ``proportion``. A detector's state is checked
plain data: ``to_state()`` / ``load_state(state)``, or :func:`detector_from_state`.
"""

from monitors.drift import adwin, page_hinkley, rate, window
from monitors.drift.adwin import AdwinDetector
from monitors.drift.base import (
    STATE_VERSION,
    BaseDriftDetector,
    DriftDetector,
    StateError,
    available_drift_detectors,
    create_drift_detector,
    detector_from_state,
    register_drift_detector,
)
from monitors.drift.page_hinkley import PageHinkleyDetector
from monitors.drift.rate import ProportionDetector
from monitors.drift.window import KSWindowDetector, MannWhitneyWindowDetector, WindowTestDetector

__all__ = [
    "STATE_VERSION",
    "AdwinDetector",
    "BaseDriftDetector",
    "DriftDetector",
    "KSWindowDetector",
    "MannWhitneyWindowDetector",
    "PageHinkleyDetector",
    "ProportionDetector",
    "StateError",
    "WindowTestDetector",
    "adwin",
    "available_drift_detectors",
    "create_drift_detector",
    "detector_from_state",
    "page_hinkley",
    "rate",
    "register_drift_detector",
    "window",
]
