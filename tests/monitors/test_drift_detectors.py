"""Seeded streams pinning what each built-in drift detector finds and when.

Scores are judge-like: Beta(mean, concentration 20) rounded to 2 decimals (standard
deviation ~0.084 at 0.82). A change comes after 3,000 in-control samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from monitors.drift import create_drift_detector
from monitors.drift.window import WindowTestDetector

CHANGE = 3000
SCORE_DETECTORS = ["adwin", "page_hinkley", "ks_window", "mannwhitney_window"]


def scores(n: int, mean: float, seed: int, concentration: float = 20.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.beta(mean * concentration, (1 - mean) * concentration, n), 2)


def shifted(after: float, seed: int, before: float = 0.82, n_after: int = 3000) -> np.ndarray:
    return np.concatenate([scores(CHANGE, before, seed), scores(n_after, after, seed + 100)])


def bernoulli(rates: list[tuple[float, int]], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([(rng.random(n) < p).astype(float) for p, n in rates])


def detections(spec: dict[str, Any], stream: np.ndarray) -> list[int]:
    detector = create_drift_detector(spec)
    found = []
    for i, x in enumerate(stream.tolist()):
        detector.update(x)
        if detector.drift_detected:
            found.append(i)
    assert detector.n == len(stream)
    return found


@pytest.mark.parametrize("kind", SCORE_DETECTORS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_drop_of_ten_points_is_found_within_300_samples(kind: str, seed: int) -> None:
    found = detections({"type": kind}, shifted(0.72, seed))
    assert found, "the drop was not detected"
    assert CHANGE <= found[0] < CHANGE + 300
    assert len(found) == 1  # re-baselined on the new level: one alarm per change


@pytest.mark.parametrize("kind", SCORE_DETECTORS)
def test_a_long_stationary_stream_raises_nothing(kind: str) -> None:
    assert detections({"type": kind}, scores(30_000, 0.82, seed=7)) == []


@pytest.mark.parametrize(
    ("spec", "fires_on_drop", "fires_on_rise"),
    [
        ({"type": "adwin"}, True, True),
        ({"type": "adwin", "direction": "down"}, True, False),
        ({"type": "adwin", "direction": "up"}, False, True),
        ({"type": "page_hinkley"}, True, False),  # mode "down" by default
        ({"type": "page_hinkley", "mode": "up"}, False, True),
        ({"type": "page_hinkley", "mode": "both"}, True, True),
        ({"type": "ks_window"}, True, True),
        ({"type": "ks_window", "direction": "down"}, True, False),
        ({"type": "ks_window", "direction": "up"}, False, True),
        ({"type": "mannwhitney_window", "direction": "down"}, True, False),
        ({"type": "mannwhitney_window", "direction": "up"}, False, True),
    ],
)
def test_direction(spec: dict[str, Any], fires_on_drop: bool, fires_on_rise: bool) -> None:
    assert bool(detections(spec, shifted(0.72, seed=4))) is fires_on_drop
    assert bool(detections(spec, shifted(0.92, seed=4))) is fires_on_rise


@pytest.mark.parametrize("kind", SCORE_DETECTORS)
def test_reference_and_recent_means_at_the_detection(kind: str) -> None:
    detector = create_drift_detector({"type": kind})
    for x in shifted(0.72, seed=5).tolist():
        detector.update(x)
        if detector.drift_detected:
            break
    assert detector.drift_detected
    ref, recent = detector.reference_mean, detector.recent_mean  # type: ignore[attr-defined]
    assert ref == pytest.approx(0.82, abs=0.01)
    assert recent < ref - 0.03  # the recent level is visibly lower


def test_adwin_reports_the_level_before_and_after_the_change() -> None:
    detector = create_drift_detector({"type": "adwin"})
    for x in shifted(0.72, seed=6).tolist():
        detector.update(x)
        if detector.drift_detected:
            break
    assert detector.reference_mean == pytest.approx(0.82, abs=0.01)  # type: ignore[attr-defined]
    assert detector.recent_mean == pytest.approx(0.72, abs=0.03)  # type: ignore[attr-defined]


def test_page_hinkley_standardized_thresholds_do_not_depend_on_the_scale() -> None:
    stream = shifted(0.72, seed=8)
    spec = {"type": "page_hinkley"}
    assert detections(spec, stream) == detections(spec, stream * 10.0 - 3.0)
    raw = {"type": "page_hinkley", "standardize": False, "threshold": 4.2, "delta": 0.017}
    assert detections(raw, stream) != detections(raw, stream * 10.0)


def test_page_hinkley_waits_for_its_warm_up_and_restarts_after_a_detection() -> None:
    detector = create_drift_detector({"type": "page_hinkley", "min_instances": 300})
    for x in scores(299, 0.82, seed=9).tolist():
        detector.update(x)
    assert detector.std is None  # type: ignore[attr-defined]
    detector.update(0.8)
    assert detector.std == pytest.approx(0.084, abs=0.015)  # type: ignore[attr-defined]
    # a collapse far beyond the threshold: detected, then the test starts over
    for x in [0.0] * 200:
        detector.update(x)
        if detector.drift_detected:
            break
    assert detector.drift_detected
    detector.update(0.0)
    assert detector.std is None and detector.reference_mean == 0.0  # type: ignore[attr-defined]


def test_window_tests_rebaseline_after_the_cooldown() -> None:
    detector = create_drift_detector({"type": "mannwhitney_window"})
    assert isinstance(detector, WindowTestDetector)
    stream = shifted(0.72, seed=10, n_after=6000).tolist()
    for x in stream[: CHANGE + 300]:
        detector.update(x)
    assert detector.n == CHANGE + 300 and not detector.testing  # detected, cooling down
    assert detector.reference_mean == pytest.approx(0.82, abs=0.01)  # old reference in force
    for x in stream[CHANGE + 300 :]:
        detector.update(x)
        assert not detector.drift_detected
    assert detector.testing
    assert detector.reference_mean == pytest.approx(0.72, abs=0.01)  # the new normal


def test_rebaseline_on_operator_command_accepts_the_new_level() -> None:
    detector = create_drift_detector({"type": "ks_window", "cooldown": 10_000})
    assert isinstance(detector, WindowTestDetector)
    stream = shifted(0.72, seed=11).tolist()
    for x in stream[:CHANGE]:
        detector.update(x)
    assert detector.testing and detector.last_pvalue is not None
    detector.rebaseline()  # e.g. the new prompt version is accepted as the new normal
    assert not detector.testing
    for x in stream[CHANGE:]:
        detector.update(x)
        assert not detector.drift_detected
    assert detector.testing and detector.reference_mean == pytest.approx(0.72, abs=0.01)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_proportion_finds_a_refusal_rate_rising_from_2_to_6_percent(seed: int) -> None:
    found = detections({"type": "proportion"}, bernoulli([(0.02, CHANGE), (0.06, 3000)], seed))
    assert found and CHANGE <= found[0] < CHANGE + 1000


def test_proportion_stays_quiet_on_a_stationary_rate_and_on_a_falling_one() -> None:
    assert detections({"type": "proportion"}, bernoulli([(0.02, 30_000)], seed=12)) == []
    falling = bernoulli([(0.06, CHANGE), (0.02, 3000)], seed=13)
    assert detections({"type": "proportion"}, falling) == []  # direction "up" by default
    found = detections({"type": "proportion", "direction": "down"}, falling)
    assert found and found[0] >= CHANGE


def test_proportion_means_are_rates() -> None:
    detector = create_drift_detector({"type": "proportion", "reference_size": 4, "window_size": 2})
    for x in [1, 0, 0, 0, 1, 1]:
        detector.update(x)
    assert detector.reference_mean == 0.25  # type: ignore[attr-defined]
    assert detector.recent_mean == 1.0  # type: ignore[attr-defined]
