"""The drift path's per-sample fast paths decide exactly as the straightforward code did.

The reference implementations below are the previous versions of `MonitoredStream.update`,
`BaseDriftDetector.update`, `WindowTestDetector._step` and `ProportionDetector._pvalue`,
kept verbatim; the live classes must match them sample by sample, state included.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np
import pytest

from monitors.drift import ProportionDetector, create_drift_detector
from monitors.drift.alarms import AlarmEvent, AlarmPolicy, MonitoredStream, StreamKey
from monitors.drift.monitor import DriftMonitor, DriftSettings


class OldStream(MonitoredStream):
    def update(self, x: float, now: float) -> AlarmEvent | None:
        self.samples += 1
        self.recent.append(x)
        self.detector.update(x)
        if not self.active:
            if self.detector.drift_detected and self.samples > 1 and not math.isnan(self.baseline):
                return self._raise(now)
            a = self.policy.baseline_alpha
            self.baseline = x if math.isnan(self.baseline) else (1 - a) * self.baseline + a * x
            return None
        current = self.current_mean
        if abs(current - self.reference) <= self.policy.band(self.reference):
            self.within_since = self.within_since if self.within_since is not None else now
        else:
            self.within_since = None
        held = now - self.since >= self.policy.min_hold_s
        quiet = (
            self.within_since is not None and now - self.within_since >= self.policy.clear_after_s
        )
        return self._clear(now) if held and quiet else None


class OldProportion(ProportionDetector):
    def update(self, x: float) -> None:
        value = float(x)
        if not math.isfinite(value):
            raise ValueError(f"{self.name}: sample must be a finite number, got {x!r}")
        if self.binary and value not in (0.0, 1.0):
            raise ValueError(f"{self.name}: sample must be 0 or 1, got {x!r}")
        self._n += 1
        self._drift = self._step(value)

    def _step(self, x: float) -> bool:
        self._ring[self._pos] = x
        self._pos = (self._pos + 1) % self.window_size
        self._filled = min(self._filled + 1, self.window_size)
        if self._cooling:
            self._cooling -= 1
            return False
        if self._reference is None or self._since_reference < 0:
            self._building.append(x)
            if len(self._building) == self.reference_size:
                self._reference = np.asarray(self._building, dtype=np.float64)
                self._reference_mean = float(self._reference.mean())
                self._building = []
                self._since_reference = 0
            return False
        self._since_reference += 1
        due = self._since_reference - self.window_size
        if due < 0 or due % self.check_every:
            return False
        self.last_pvalue = float(self._pvalue(self._reference, self._ring))
        if self.last_pvalue >= self.alpha:
            return False
        self.rebaseline()
        self._cooling = self.cooldown
        return True

    def _pvalue(self, reference: np.ndarray, recent: np.ndarray) -> float:
        from monitors.drift.rate import _fisher

        k_ref = int(reference.sum())
        k_rec = int(recent.sum())
        return _fisher(k_rec, recent.size, k_ref, reference.size, self._ALTERNATIVE[self.direction])


def _rates(seed: int, n: int) -> list[float]:
    """0/1 samples whose rate steps up and down, so detections, cooldowns and rebuilt
    references all happen."""
    rng = random.Random(seed)
    levels = [0.02, 0.15, 0.03, 0.3, 0.01]
    return [float(rng.random() < levels[(i * len(levels)) // n]) for i in range(n)]


def _state(obj: Any) -> dict[str, Any]:
    out = {}
    for k, v in vars(obj).items():
        if isinstance(v, np.ndarray):
            out[k] = v.tolist()
        elif k == "detector":
            out[k] = _state(v)
        elif k == "recent":
            out[k] = list(v)
        elif k != "_k_ref":
            out[k] = v
    return out


@pytest.mark.parametrize("direction", ["up", "both", "down"])
@pytest.mark.parametrize("seed", [1, 2])
def test_stream_and_proportion_match_the_straightforward_code(direction: str, seed: int) -> None:
    params: dict[str, Any] = {
        "reference_size": 300,
        "window_size": 100,
        "check_every": 7,
        "alpha": 0.01,
        "cooldown": 40,
        "direction": direction,
    }
    pol = AlarmPolicy(min_hold_s=20, clear_after_s=30, recent_window=50)
    key = StreamKey("refusal", "proportion")
    new = MonitoredStream(key, ProportionDetector(**params), pol)
    old = OldStream(key, OldProportion(**params), pol)
    alarms = 0
    for i, x in enumerate(_rates(seed, 12_000)):
        a, b = new.update(x, float(i)), old.update(x, float(i))
        assert a == b, i
        assert new.detector.drift_detected == old.detector.drift_detected
        assert new.detector.last_pvalue == old.detector.last_pvalue
        alarms += a is not None
        if i % 997 == 0:
            assert _state(new) == _state(old)
        if i == 5982:  # operator command mid-stream
            assert new.rebaseline(float(i)) == old.rebaseline(float(i))
    assert _state(new) == _state(old)
    if direction != "down":  # the rate never falls below the first reference
        assert alarms >= 2  # the comparison covered raises and clears


@pytest.mark.parametrize("spec", [{"type": "adwin"}, {"type": "page_hinkley", "min_instances": 50}])
def test_stream_update_matches_with_score_detectors(spec: dict[str, Any]) -> None:
    rng = random.Random(5)
    pol = AlarmPolicy(min_hold_s=5, clear_after_s=5)
    key = StreamKey("faithfulness", spec["type"])
    new = MonitoredStream(key, create_drift_detector(spec), pol)
    old = OldStream(key, create_drift_detector(spec), pol)
    for i in range(6000):
        x = min(1.0, max(0.0, rng.gauss(0.8 if (i // 1500) % 2 else 0.5, 0.1)))
        assert new.update(x, float(i)) == old.update(x, float(i)), i
    assert (new.samples, new.active, new.baseline, list(new.recent)) == (
        old.samples,
        old.active,
        old.baseline,
        list(old.recent),
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_samples_are_still_rejected(bad: float) -> None:
    for spec in ({"type": "proportion"}, {"type": "adwin"}):
        det = create_drift_detector(spec)
        with pytest.raises(ValueError, match="finite number"):
            det.update(bad)
        assert det.n == 0


def test_binary_detector_still_rejects_other_values() -> None:
    det = create_drift_detector({"type": "proportion"})
    for ok in (0, 1, 0.0, 1.0, True, False, -0.0):
        det.update(ok)
    with pytest.raises(ValueError, match="0 or 1"):
        det.update(0.5)
    assert det.n == 7


def test_the_cached_reference_count_is_not_in_the_state_and_follows_a_new_reference() -> None:
    det = ProportionDetector(reference_size=50, window_size=20, check_every=5, alpha=1e-3)
    xs = _rates(3, 3000)
    for x in xs[:1500]:
        det.update(x)
    assert det._k_ref is not None
    state = det.to_state()
    assert "_k_ref" not in json.dumps(state) and "k_ref" not in json.dumps(state)
    twin = ProportionDetector(reference_size=50, window_size=20, check_every=5, alpha=1e-3)
    twin.load_state(json.loads(json.dumps(state)))
    assert twin._k_ref is None
    ref = OldProportion(reference_size=50, window_size=20, check_every=5, alpha=1e-3)
    for x in xs[:1500]:
        ref.update(x)
    for x in xs[1500:]:  # the restored copy and the original decide alike, through new
        det.update(x)  # references (the step at 2/3 of the stream makes detections)
        twin.update(x)
        ref.update(x)
        assert det.drift_detected == twin.drift_detected == ref.drift_detected
        assert det.last_pvalue == twin.last_pvalue == ref.last_pvalue
    assert det._k_ref is not None and det._k_ref[0] is det._reference


def test_monitor_updates_a_restored_stream_not_the_cached_one() -> None:
    settings = DriftSettings(rate_metrics=["refusal"])
    mon = DriftMonitor(settings, clock=lambda: 0.0)
    for _ in range(5):
        mon.observe([], set(), None, None)
    (stream,) = mon.streams.values()
    assert stream.samples == 5
    states = mon.series_state("rate", "refusal", "all")
    mon.drop_series("rate", "refusal", "all")
    assert mon.load_series("rate", "refusal", "all", json.loads(json.dumps(states))) == 1
    (restored,) = mon.streams.values()
    assert restored is not stream
    mon.observe([], {("refusal", "refusal")}, None, None)
    assert (restored.samples, stream.samples) == (6, 5)
    assert list(restored.recent)[-1] == 1.0
