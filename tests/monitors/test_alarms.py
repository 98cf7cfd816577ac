"""Alarm semantics (raise once, hold, clear after a quiet period), with a scripted detector."""

from __future__ import annotations

import pickle

from monitors.drift.alarms import AlarmPolicy, MonitoredStream, StreamKey


class Scripted:
    """A drift detector that reports drift exactly at the listed sample numbers."""

    def __init__(self, at: set[int]) -> None:
        self.at, self.n, self.drift_detected = at, 0, False

    def update(self, x: float) -> None:
        self.n += 1
        self.drift_detected = self.n in self.at


def _stream(at: set[int]) -> MonitoredStream:
    pol = AlarmPolicy(min_hold_s=10, clear_after_s=5, band_abs=0.02, band_rel=0.0, recent_window=10)
    return MonitoredStream(StreamKey("false_rejection", "scripted"), Scripted(at), pol)


def test_raises_once_with_reference_and_direction() -> None:
    s = _stream({50, 60, 70})
    events = [s.update(0.0 if i < 45 else 1.0, now=float(i)) for i in range(1, 80)]
    raised = [e for e in events if e is not None]
    assert len(raised) == 1  # later detections while up are absorbed
    e = raised[0]
    assert (e.state, e.metric, e.detector, e.direction) == (
        "raised",
        "false_rejection",
        "scripted",
        "up",
    )
    assert e.reference_mean < 0.05 and e.current_mean > 0.5 and e.samples_seen == 50


def test_clears_only_after_hold_and_quiet_period() -> None:
    s = _stream({20})
    out = []
    for i in range(1, 60):
        x = 1.0 if 15 <= i < 25 else 0.0  # a burst, then back to normal
        e = s.update(x, now=float(i))
        if e is not None:
            out.append((i, e.state))
    raised_at = out[0][0]
    cleared_at = out[1][0]
    assert out[0][1] == "raised" and out[1][1] == "cleared" and len(out) == 2
    assert cleared_at - raised_at >= 10  # min hold
    # the recent window (10 samples) is back to 0 at i=34; quiet for 5 s after that
    assert cleared_at >= 34 + 5


def test_no_clear_while_out_of_band() -> None:
    s = _stream({20})
    events = [s.update(1.0 if i >= 15 else 0.0, now=float(i)) for i in range(1, 200)]
    assert [e.state for e in events if e is not None] == ["raised"]
    assert s.active


def test_pickle_round_trip_keeps_the_alarm_up() -> None:
    s = _stream({20})
    for i in range(1, 30):
        s.update(1.0 if i >= 15 else 0.0, now=float(i))
    restored = pickle.loads(pickle.dumps(s))
    assert restored.active and restored.reference == s.reference
    assert list(restored.recent) == list(s.recent) and restored.recent.maxlen == 10


def test_judge_score_streams_raise_on_a_drop() -> None:
    import random

    from monitors.drift.monitor import DriftMonitor, DriftSettings

    monitor = DriftMonitor(DriftSettings(score_metrics=["faithfulness"]), clock=lambda: 0.0)
    rng = random.Random(3)
    raised = []
    for i in range(3000):
        mean = 0.82 if i < 1500 else 0.62
        score = min(1.0, max(0.0, rng.gauss(mean, 0.08)))
        raised += monitor.observe_scores({"faithfulness": score, "other": 0.1}, "svc")
    assert [(a.metric, a.detector, a.direction) for a in raised] == [
        ("faithfulness", "page_hinkley", "down")
    ]
    assert {k.metric for k in monitor.active()} == {"faithfulness"}
