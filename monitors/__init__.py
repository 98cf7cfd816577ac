"""Over-time monitors on the event streams: drift detectors (registered by name) and alarms.

Judge metrics on sampled turns are the next milestone.
"""

from monitors.drift import (
    BaseDriftDetector,
    DriftDetector,
    available_drift_detectors,
    create_drift_detector,
    register_drift_detector,
)
from monitors.drift.alarms import AlarmEvent, AlarmPolicy, MonitoredStream, StreamKey
from monitors.drift.monitor import DriftMonitor, DriftSettings

__all__ = [
    "AlarmEvent",
    "AlarmPolicy",
    "BaseDriftDetector",
    "DriftDetector",
    "DriftMonitor",
    "DriftSettings",
    "MonitoredStream",
    "StreamKey",
    "available_drift_detectors",
    "create_drift_detector",
    "register_drift_detector",
]
