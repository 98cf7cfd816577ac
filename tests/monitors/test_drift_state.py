"""Detector state survives pickling (the sidecar persists it) and `reset()` forgets it."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from monitors.drift import BaseDriftDetector, create_drift_detector
from tests.monitors.test_drift_detectors import CHANGE, bernoulli, scores, shifted

KINDS = ["adwin", "page_hinkley", "ks_window", "mannwhitney_window", "proportion"]


def stream_for(kind: str, seed: int = 21) -> list[float]:
    """Two changes, so that every snapshot point still has a detection after it."""
    if kind == "proportion":
        values = bernoulli([(0.02, CHANGE), (0.06, 4000), (0.15, 3000)], seed)
    else:
        second = scores(3000, 0.62, seed + 1)
        values = np.concatenate([shifted(0.72, seed, n_after=2500), second])
    return values.tolist()


def trace(detector: BaseDriftDetector, values: list[float]) -> list[tuple[Any, ...]]:
    out = []
    for x in values:
        detector.update(x)
        out.append(
            (detector.drift_detected, detector.n, detector.reference_mean, detector.recent_mean)
        )
    return out


def first_detection(kind: str, values: list[float]) -> int:
    detector = create_drift_detector({"type": kind})
    for i, x in enumerate(values):
        detector.update(x)
        if detector.drift_detected:
            return i
    raise AssertionError("no detection in the test stream")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["warming_up", "in_control", "at_a_detection", "after_one"])
def test_pickle_round_trip_mid_stream_makes_identical_decisions(kind: str, where: str) -> None:
    values = stream_for(kind)
    hit = first_detection(kind, values)
    cut = {
        "warming_up": 150,
        "in_control": 2500,
        "at_a_detection": hit + 1,
        "after_one": hit + 700,
    }[where]
    original = create_drift_detector({"type": kind})
    assert isinstance(original, BaseDriftDetector)
    trace(original, values[:cut])
    if where == "at_a_detection":
        assert original.drift_detected  # snapshot taken right on the detecting update
    restored = pickle.loads(pickle.dumps(original))
    assert restored.spec == original.spec and restored.n == original.n == cut
    expected = trace(original, values[cut:])
    assert trace(restored, values[cut:]) == expected
    assert any(step[0] for step in expected), "no detection after the snapshot: weak test"


@pytest.mark.parametrize("kind", KINDS)
def test_reset_forgets_everything(kind: str) -> None:
    values = stream_for(kind)
    used = create_drift_detector({"type": kind})
    assert isinstance(used, BaseDriftDetector)
    trace(used, values[: CHANGE + 1500])
    used.reset()
    assert used.n == 0 and not used.drift_detected
    assert used.reference_mean is None and used.recent_mean is None
    fresh = create_drift_detector({"type": kind})
    assert isinstance(fresh, BaseDriftDetector)
    assert trace(used, values) == trace(fresh, values)
