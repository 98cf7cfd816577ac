"""Every registered drift detector checked the same way: builds from its defaults, refuses
a bad option naming it, is deterministic, its state round-trips as JSON data mid-stream
(the restored one decides the same), and hostile samples are refused with a clear error,
never taken in."""

from __future__ import annotations

import json
import math
import random

import pytest

import monitors.drift  # noqa: F401  (registers the built-ins)
from monitors.drift.base import (
    available_drift_detectors,
    create_drift_detector,
    detector_from_state,
)

NAMES = available_drift_detectors()


def _stream(binary: bool, n: int = 3000, seed: int = 5) -> list[float]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        p = 0.1 if i < n // 2 else 0.4  # a change half way
        out.append(float(rng.random() < p) if binary else min(1.0, max(0.0, rng.gauss(p, 0.1))))
    return out


def _binary(name: str) -> bool:
    return bool(getattr(create_drift_detector({"type": name}), "binary", False))


@pytest.mark.parametrize("name", NAMES)
def test_builds_and_refuses_a_bad_option_naming_it(name: str) -> None:
    det = create_drift_detector({"type": name})
    assert det.n == 0 and not det.drift_detected
    with pytest.raises(ValueError, match="not_an_option"):
        create_drift_detector({"type": name, "not_an_option": 1})


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_and_its_state_round_trips_mid_stream(name: str) -> None:
    xs = _stream(_binary(name))
    a, b = create_drift_detector({"type": name}), create_drift_detector({"type": name})
    flags_a, flags_b = [], []
    restored = None
    for i, x in enumerate(xs):
        a.update(x)
        b.update(x)
        flags_a.append(a.drift_detected)
        flags_b.append(b.drift_detected)
        if i == len(xs) // 3:
            data = json.loads(json.dumps(a.to_state(), allow_nan=False))  # plain JSON data
            restored = detector_from_state(data)
            rest = [(j, y) for j, y in enumerate(xs) if j > i]
    assert flags_a == flags_b
    assert restored is not None
    again = []
    for _, y in rest:
        restored.update(y)
        again.append(restored.drift_detected)
    assert again == flags_a[len(xs) // 3 + 1 :]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_samples_are_refused_and_change_nothing(name: str) -> None:
    det = create_drift_detector({"type": name})
    for x in _stream(_binary(name), n=50):
        det.update(x)
    before = json.dumps(det.to_state())
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="finite"):
            det.update(bad)
    assert json.dumps(det.to_state()) == before
