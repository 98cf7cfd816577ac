"""Alarm semantics on top of a drift detector: raise, hold, clear after a quiet period.

A :class:`MonitoredStream` feeds one value stream (a failure-mode indicator 0/1, or a
judge score) to one drift detector. When the detector reports drift, the alarm
*raises* (once; further detections while it is up are absorbed), with the reference
mean frozen at that moment. It *clears* only when it has been up for at least
`min_hold_s` and the recent mean has stayed inside the reference band for
`clear_after_s` — so a flapping stream pages once, not every few minutes.

A stream's state is data (:meth:`MonitoredStream.to_state`, checked by
:meth:`MonitoredStream.from_state`); an alarm's `alarm_id` is derived from the stream and
the raise time, so the same alarm re-published after a restart carries the same id.
"""

from __future__ import annotations

import hashlib
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from monitors.drift._state import decode_float, encode_float, envelope
from monitors.drift.base import STATE_VERSION, StateError, create_drift_detector

__all__ = ["AlarmEvent", "AlarmPolicy", "MonitoredStream", "StreamKey"]


@dataclass(frozen=True, slots=True)
class StreamKey:
    metric: str
    detector: str
    service: str = "all"

    @property
    def id(self) -> str:
        return f"{self.metric}|{self.detector}|{self.service}"


@dataclass(frozen=True, slots=True)
class AlarmPolicy:
    min_hold_s: float = 300.0
    clear_after_s: float = 600.0
    band_abs: float = 0.02  # back "within the reference band" when |recent - reference| <= band
    band_rel: float = 0.25
    recent_window: int = 200  # samples in the "current mean"
    baseline_alpha: float = 0.002  # EWMA weight of the pre-alarm baseline

    def band(self, reference: float) -> float:
        return max(self.band_abs, self.band_rel * abs(reference))


@dataclass(frozen=True, slots=True)
class AlarmEvent:
    """One alarm transition, as published on the alarms topic."""

    state: Literal["raised", "cleared"]
    metric: str
    detector: str
    service: str
    direction: Literal["up", "down"]
    reference_mean: float
    current_mean: float
    samples_seen: int
    since: str
    at: str

    @property
    def alarm_id(self) -> str:
        """The alarm's id: the same for its raise and its clear, and for both re-published
        after a crash (16 hex digits of sha256 over "metric|detector|service|since")."""
        raw = f"{self.metric}|{self.detector}|{self.service}|{self.since}"
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "metric": self.metric,
            "detector": self.detector,
            "service": self.service,
            "direction": self.direction,
            "reference_mean": round(self.reference_mean, 6),
            "current_mean": round(self.current_mean, 6),
            "samples_seen": self.samples_seen,
            "since": self.since,
            "at": self.at,
            "alarm_id": self.alarm_id,
        }


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


_STATE_KEYS = (
    "v", "key", "samples", "active", "since", "reference", "baseline", "within_since",
    "recent", "detector",
)  # fmt: skip


def _key(value: Any) -> StreamKey:
    ok = isinstance(value, list | tuple) and len(value) == 3
    if not ok or not all(isinstance(v, str) and 0 < len(v) <= 200 for v in value):
        raise StateError("bad_type", "stream state: key must be [metric, detector, service]")
    return StreamKey(*value)


@dataclass
class MonitoredStream:
    key: StreamKey
    detector: Any  # monitors.drift.DriftDetector
    policy: AlarmPolicy = field(default_factory=AlarmPolicy)
    samples: int = 0
    active: bool = False
    since: float = 0.0
    reference: float = math.nan
    baseline: float = math.nan
    within_since: float | None = None
    recent: deque[float] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.recent = deque(self.recent, maxlen=self.policy.recent_window)

    def to_state(self) -> dict[str, Any]:
        """The stream's state as JSON-compatible data (NaN and infinity as strings)."""
        within = self.within_since
        return {
            "v": STATE_VERSION,
            "key": [self.key.metric, self.key.detector, self.key.service],
            "samples": self.samples,
            "active": self.active,
            "since": float(self.since),
            "reference": encode_float(float(self.reference)),
            "baseline": encode_float(float(self.baseline)),
            "within_since": None if within is None else float(within),
            "recent": [encode_float(float(x)) for x in self.recent],
            "detector": self.detector.to_state(),
        }

    @classmethod
    def from_state(
        cls, state: Mapping[str, Any], spec: Mapping[str, Any], policy: AlarmPolicy
    ) -> MonitoredStream:
        """A stream from `to_state` data, its detector built from the configured `spec`.

        StateError when anything does not fit: the version, the key's detector vs
        ``spec["type"]``, the detector state's spec vs `spec`, any field. At most the
        last `policy.recent_window` recent samples are read.
        """
        f = envelope(state, "stream state", _STATE_KEYS)
        key = _key(f.raw("key"))
        if key.detector != spec.get("type"):
            raise StateError("spec_mismatch", f"stream state of {key.detector[:40]!r}")
        samples, active = f.integer("samples"), f.boolean("active")
        since, within = float(f.number("since")), f.number("within_since", optional=True)
        reference = decode_float(f.raw("reference"), "stream state.reference")
        baseline = decode_float(f.raw("baseline"), "stream state.baseline")
        if within is not None and not active:
            raise StateError("out_of_range", "stream state: within_since of no alarm")
        raw = f.raw("recent")
        if not isinstance(raw, list):
            raise StateError("bad_type", "stream state: recent must be a list")
        if len(raw) > samples:
            raise StateError("bad_length", "stream state: more recent samples than samples")
        tail = raw[max(0, len(raw) - policy.recent_window) :]
        recent = [decode_float(x, "stream state.recent") for x in tail]
        try:
            detector = create_drift_detector(spec)
        except ValueError as exc:
            raise StateError("spec_mismatch", f"configured spec: {exc}") from None
        detector.load_state(f.raw("detector"))
        if detector.n > samples:
            raise StateError("out_of_range", "stream state: detector saw more than the stream")
        within = None if within is None else float(within)
        stream = cls(key, detector, policy, samples, active, since, reference, baseline, within)
        stream.recent.extend(recent)
        return stream

    @property
    def current_mean(self) -> float:
        return sum(self.recent) / len(self.recent) if self.recent else math.nan

    def update(self, x: float, now: float) -> AlarmEvent | None:
        self.samples += 1
        self.recent.append(x)
        detector = self.detector
        detector.update(x)
        if not self.active:
            baseline = self.baseline
            if baseline != baseline:  # NaN: no baseline yet, this sample starts it
                self.baseline = x
            elif detector.drift_detected and self.samples > 1:
                return self._raise(now)
            else:
                a = self.policy.baseline_alpha
                self.baseline = (1 - a) * baseline + a * x
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

    def rebaseline(self, now: float) -> AlarmEvent | None:
        """Operator command: the current level is the new normal. Clears an alarm that is up."""
        event = self._clear(now) if self.active else None
        rebase = getattr(self.detector, "rebaseline", None)
        if callable(rebase):
            rebase()
        else:
            self.detector.reset()
        return event

    def _event(self, state: Literal["raised", "cleared"], now: float) -> AlarmEvent:
        current = self.current_mean
        if state == "raised":  # the detector's own recent window is what it tested
            recent = getattr(self.detector, "recent_mean", None)
            current = float(recent) if isinstance(recent, int | float) else current
        return AlarmEvent(
            state=state,
            metric=self.key.metric,
            detector=self.key.detector,
            service=self.key.service,
            direction="up" if current >= self.reference else "down",
            reference_mean=self.reference,
            current_mean=current,
            samples_seen=self.samples,
            since=_iso(self.since),
            at=_iso(now),
        )

    def _raise(self, now: float) -> AlarmEvent:
        ref = getattr(self.detector, "reference_mean", None)
        self.reference = float(ref) if isinstance(ref, int | float) else self.baseline
        self.active, self.since, self.within_since = True, now, None
        return self._event("raised", now)

    def _clear(self, now: float) -> AlarmEvent:
        event = self._event("cleared", now)
        self.active, self.within_since = False, None
        self.baseline = self.current_mean
        return event
