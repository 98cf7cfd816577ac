"""Drift detectors for monitored metric streams, registered by name.

Importing this package registers the built-ins: ``adwin``, ``page_hinkley``,
``ks_window``, ``mannwhitney_window`` and ``proportion``.
"""

from monitors.drift import adwin, page_hinkley, rate, window
from monitors.drift.adwin import AdwinDetector
from monitors.drift.base import (
    BaseDriftDetector,
    DriftDetector,
    available_drift_detectors,
    create_drift_detector,
    register_drift_detector,
)
from monitors.drift.page_hinkley import PageHinkleyDetector
from monitors.drift.rate import ProportionDetector
from monitors.drift.window import KSWindowDetector, MannWhitneyWindowDetector, WindowTestDetector

__all__ = [
    "AdwinDetector",
    "BaseDriftDetector",
    "DriftDetector",
    "KSWindowDetector",
    "MannWhitneyWindowDetector",
    "PageHinkleyDetector",
    "ProportionDetector",
    "WindowTestDetector",
    "adwin",
    "available_drift_detectors",
    "create_drift_detector",
    "page_hinkley",
    "rate",
    "register_drift_detector",
    "window",
]
