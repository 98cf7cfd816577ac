"""A monitored stream's state is checked data; an alarm's id survives a restart."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np
import pytest

from monitors.drift import StateError, create_drift_detector
from monitors.drift.alarms import AlarmEvent, AlarmPolicy, MonitoredStream, StreamKey
from tests.monitors.test_drift_state import pickle_inputs

SPEC: dict[str, Any] = {
    "type": "proportion",
    "reference_size": 300,
    "window_size": 60,
    "check_every": 5,
    "alpha": 1e-3,
    "cooldown": 60,
}
POLICY = AlarmPolicy(min_hold_s=30, clear_after_s=20, recent_window=50)


def samples() -> list[float]:
    """A refusal rate of 2 %, a burst at 40 %, back to 2 %, another burst."""
    rng = np.random.default_rng(4)
    rates = [(0.02, 600), (0.4, 150), (0.02, 600), (0.5, 200), (0.02, 400)]
    return np.concatenate([(rng.random(n) < p).astype(float) for p, n in rates]).tolist()


def new_stream(spec: dict[str, Any] | None = None) -> MonitoredStream:
    spec = spec or SPEC
    return MonitoredStream(StreamKey("refusal", spec["type"]), create_drift_detector(spec), POLICY)


def run(stream: MonitoredStream, xs: list[float], start: int) -> list[dict[str, Any]]:
    out = []
    for i, x in enumerate(xs, start):
        event = stream.update(x, now=1_700_000_000.0 + i)
        if event is not None:
            out.append(event.to_dict())
    return out


def as_data(stream: MonitoredStream) -> dict[str, Any]:
    state = json.loads(json.dumps(stream.to_state(), allow_nan=False))
    assert isinstance(state, dict)
    return state


def mid_alarm() -> tuple[MonitoredStream, int]:
    """A stream whose alarm is up and whose recent mean is back in band (clear pending)."""
    xs, stream = samples(), new_stream()
    for i, x in enumerate(xs):
        stream.update(x, now=1_700_000_000.0 + i)
        if stream.active and stream.within_since is not None:
            return stream, i + 1
    raise AssertionError("the stream never got back in band under an alarm")


def test_round_trip_mid_alarm_gives_the_same_alarm_events() -> None:
    stream, cut = mid_alarm()
    state = as_data(stream)
    restored = MonitoredStream.from_state(state, SPEC, POLICY)
    assert restored.to_state() == state
    assert restored.key == stream.key and restored.active and restored.within_since is not None
    assert restored.recent.maxlen == POLICY.recent_window
    tail = samples()[cut:]
    expected = run(stream, tail, cut)
    assert run(restored, tail, cut) == expected
    assert [e["state"] for e in expected][:2] == ["cleared", "raised"]  # both kinds after it


@pytest.mark.parametrize("kind", ["adwin", "page_hinkley", "ks_window", "mannwhitney_window"])
def test_a_fresh_score_stream_round_trips_with_nan_levels(kind: str) -> None:
    stream = new_stream({"type": kind})
    state = as_data(stream)  # reference and baseline are NaN: strings in the data
    assert state["reference"] == "nan" and state["baseline"] == "nan"
    restored = MonitoredStream.from_state(state, {"type": kind}, POLICY)
    assert math.isnan(restored.reference) and math.isnan(restored.baseline)
    xs = np.clip(np.random.default_rng(2).normal(0.8, 0.1, 500), 0, 1).tolist()
    assert run(restored, xs, 0) == run(stream, xs, 0)


@pytest.mark.parametrize(
    ("edit", "spec", "reason"),
    [
        ({"v": 2}, SPEC, "version"),
        ({"key": ["refusal", "ks_window", "all"]}, SPEC, "spec_mismatch"),
        ({}, {**SPEC, "alpha": 1e-2}, "spec_mismatch"),  # the configuration changed
        ({}, {"type": "proportion"}, "spec_mismatch"),
        ({"key": ["refusal", "proportion"]}, SPEC, "bad_type"),
        ({"key": "refusal|proportion|all"}, SPEC, "bad_type"),
        ({"key": ["", "proportion", "all"]}, SPEC, "bad_type"),
        ({"samples": -1}, SPEC, "out_of_range"),
        ({"samples": 10}, SPEC, "bad_length"),  # fewer samples than recent ones
        ({"active": "yes"}, SPEC, "bad_type"),
        ({"active": False}, SPEC, "out_of_range"),  # within_since of no alarm
        ({"since": "nan"}, SPEC, "bad_type"),
        ({"since": float("inf")}, SPEC, "not_finite"),
        ({"within_since": [1]}, SPEC, "bad_type"),
        ({"reference": "0.5"}, SPEC, "bad_type"),
        ({"reference": None}, SPEC, "bad_type"),
        ({"recent": {"0": 1.0}}, SPEC, "bad_type"),
        ({"recent": [0.0] * 49 + ["x"]}, SPEC, "bad_type"),
        ({"recent": [0.0] * 49 + [True]}, SPEC, "bad_type"),
        ({"detector": None}, SPEC, "bad_type"),
        ({"detector": {"v": 1}}, SPEC, "missing_field"),
        ({"extra": 1}, SPEC, "bad_type"),
    ],
)
def test_from_state_refuses_what_does_not_fit(
    edit: dict[str, Any], spec: dict[str, Any], reason: str
) -> None:
    stream, _ = mid_alarm()
    state = {**as_data(stream), **edit}
    with pytest.raises(StateError) as err:
        MonitoredStream.from_state(state, spec, POLICY)
    assert err.value.reason == reason, str(err.value)


@pytest.mark.parametrize("drop", ["v", "key", "samples", "recent", "detector"])
def test_from_state_names_a_missing_field(drop: str) -> None:
    state = as_data(new_stream())
    del state[drop]
    with pytest.raises(StateError) as err:
        MonitoredStream.from_state(state, SPEC, POLICY)
    assert err.value.reason == "missing_field"


def test_a_detector_state_of_another_detector_is_refused() -> None:
    state = as_data(new_stream())
    state["detector"] = create_drift_detector({"type": "ks_window"}).to_state()
    with pytest.raises(StateError) as err:
        MonitoredStream.from_state(state, SPEC, POLICY)
    assert err.value.reason == "spec_mismatch"


def test_recent_is_bounded_by_the_policy_reading_only_its_tail() -> None:
    stream, _ = mid_alarm()
    state = as_data(stream)
    state["samples"] = 10**7
    state["recent"] = ["not a number"] * 10**6 + [0.0] * POLICY.recent_window
    restored = MonitoredStream.from_state(state, SPEC, POLICY)
    assert list(restored.recent) == [0.0] * POLICY.recent_window
    small = AlarmPolicy(recent_window=5)
    assert len(MonitoredStream.from_state(as_data(stream), SPEC, small).recent) == 5


def test_pickle_payloads_are_not_stream_state(tmp_path: Any) -> None:
    marker = tmp_path / "pwned"
    for hostile in pickle_inputs(str(marker)):
        with pytest.raises(StateError):
            MonitoredStream.from_state(hostile, SPEC, POLICY)
    assert not marker.exists()


def event(since: str = "2026-01-01T00:00:00+00:00", **kw: Any) -> AlarmEvent:
    fields: dict[str, Any] = {
        "state": "raised",
        "metric": "refusal",
        "detector": "proportion",
        "service": "all",
        "direction": "up",
        "reference_mean": 0.02,
        "current_mean": 0.3,
        "samples_seen": 900,
        "since": since,
        "at": since,
    }
    return AlarmEvent(**{**fields, **kw})


def test_alarm_id_is_deterministic_and_names_one_raise() -> None:
    e = event()
    raw = "refusal|proportion|all|2026-01-01T00:00:00+00:00"
    assert e.alarm_id == hashlib.sha256(raw.encode()).hexdigest()[:16]
    assert e.to_dict()["alarm_id"] == e.alarm_id and len(e.alarm_id) == 16
    assert event(state="cleared", at="2026-01-01T00:20:00+00:00").alarm_id == e.alarm_id
    assert event(samples_seen=901, current_mean=0.4).alarm_id == e.alarm_id
    assert event(since="2026-01-01T00:00:01+00:00").alarm_id != e.alarm_id
    assert event(service="svc-a").alarm_id != e.alarm_id


def test_a_raise_republished_after_a_restart_carries_the_same_id() -> None:
    xs = samples()
    stream = new_stream()
    raised_at, first = next(
        (i, e) for i, x in enumerate(xs) if (e := stream.update(x, 1_700_000_000.0 + i))
    )
    assert first.state == "raised"
    # a crash right after the raise: the restored stream re-derives the same event
    before = new_stream()
    run(before, xs[:raised_at], 0)
    restored = MonitoredStream.from_state(as_data(before), SPEC, POLICY)
    again = restored.update(xs[raised_at], 1_700_000_000.0 + raised_at)
    assert again is not None and again.to_dict() == first.to_dict()
    assert again.alarm_id == first.alarm_id
