"""The drift detector extension point: registry, specs, input checks, the protocol."""

from __future__ import annotations

from typing import Any

import pytest

from monitors.drift import (
    BaseDriftDetector,
    DriftDetector,
    available_drift_detectors,
    create_drift_detector,
    register_drift_detector,
)
from monitors.drift import base as drift_base

BUILTINS = ["adwin", "ks_window", "mannwhitney_window", "page_hinkley", "proportion"]


def test_builtins_are_registered() -> None:
    assert available_drift_detectors() == BUILTINS


@pytest.mark.parametrize("kind", BUILTINS)
def test_every_builtin_follows_the_protocol_and_rebuilds_from_its_spec(kind: str) -> None:
    detector = create_drift_detector({"type": kind})
    assert isinstance(detector, DriftDetector)
    assert detector.n == 0 and detector.drift_detected is False
    assert detector.reference_mean is None and detector.recent_mean is None  # type: ignore[attr-defined]
    spec = detector.spec  # type: ignore[attr-defined]
    assert spec["type"] == kind
    assert create_drift_detector(spec).spec == spec  # type: ignore[attr-defined]


def test_config_style_spec_sets_parameters() -> None:
    detector = create_drift_detector({"type": "adwin", "delta": 0.01, "clock": 16})
    assert detector.spec == {  # type: ignore[attr-defined]
        "type": "adwin",
        "delta": 0.01,
        "clock": 16,
        "max_buckets": 5,
        "min_window_length": 5,
        "grace_period": 10,
        "direction": "both",
        "recent_size": 100,
        "state_samples": 10_000,
    }


def test_unknown_type_names_it_and_lists_the_available_ones() -> None:
    with pytest.raises(ValueError) as err:
        create_drift_detector({"type": "cusum2"})
    message = str(err.value)
    assert "'cusum2'" in message
    assert all(kind in message for kind in BUILTINS)


@pytest.mark.parametrize("spec", [{}, {"delta": 0.1}, "adwin", {"type": 3}])
def test_spec_without_a_usable_type_is_rejected(spec: Any) -> None:
    with pytest.raises(ValueError, match="adwin, ks_window"):
        create_drift_detector(spec)


def test_unknown_parameter_is_named_and_accepted_ones_listed() -> None:
    with pytest.raises(ValueError) as err:
        create_drift_detector({"type": "adwin", "delta": 0.01, "dleta": 0.1})
    message = str(err.value)
    assert "dleta" in message and "accepted" in message and "grace_period" in message


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ({"type": "adwin", "delta": 0}, "delta"),
        ({"type": "adwin", "delta": "small"}, "delta"),
        ({"type": "adwin", "clock": 2.5}, "clock"),
        ({"type": "page_hinkley", "mode": "sideways"}, "mode"),
        ({"type": "page_hinkley", "threshold": -1}, "threshold"),
        ({"type": "page_hinkley", "standardize": "yes"}, "standardize"),
        ({"type": "ks_window", "alpha": 1.5}, "alpha"),
        ({"type": "mannwhitney_window", "window_size": 1}, "window_size"),
        ({"type": "proportion", "direction": "left"}, "direction"),
        ({"type": "proportion", "check_every": True}, "check_every"),
    ],
)
def test_bad_parameter_values_are_named(spec: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        create_drift_detector(spec)


@pytest.mark.parametrize("kind", BUILTINS)
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_samples_are_rejected(kind: str, bad: float) -> None:
    detector = create_drift_detector({"type": kind})
    with pytest.raises(ValueError, match="finite"):
        detector.update(bad)
    assert detector.n == 0


def test_proportion_takes_only_zero_or_one() -> None:
    detector = create_drift_detector({"type": "proportion"})
    detector.update(True)
    detector.update(0)
    with pytest.raises(ValueError, match="0 or 1"):
        detector.update(0.5)
    assert detector.n == 2


def test_a_plugin_registers_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drift_base._REGISTRY, "_factories", dict(drift_base._REGISTRY._factories))

    @register_drift_detector("below_limit")
    class BelowLimit(BaseDriftDetector):
        def __init__(self, *, limit: float = 0.5) -> None:
            self.limit = limit
            super().__init__()

        def _reset_state(self) -> None:
            self._last: float | None = None

        def _step(self, x: float) -> bool:
            self._last = x
            return x < self.limit

        @property
        def reference_mean(self) -> float | None:
            return self.limit

        @property
        def recent_mean(self) -> float | None:
            return self._last

    assert "below_limit" in available_drift_detectors()
    detector = create_drift_detector({"type": "below_limit", "limit": 0.3})
    assert isinstance(detector, BelowLimit) and detector.spec == {
        "type": "below_limit",
        "limit": 0.3,
    }
    detector.update(0.2)
    assert detector.drift_detected and detector.n == 1
    detector.update(0.9)
    assert not detector.drift_detected
    with pytest.raises(ValueError, match="already registered"):
        register_drift_detector("below_limit")(BelowLimit)
