"""Online drift monitoring of the per-event streams, with alarms and persistable state.

Every scored event feeds one 0/1 value per configured *rate metric* (a failure mode,
or `refusal` for any refusal) into each configured drift detector; judge scores
(later milestone) feed score detectors the same way. Each (metric, detector[, service])
is a :class:`~monitors.alarms.MonitoredStream`; the set is bounded by configuration.

State (detector internals, alarm state) is snapshotted as pickles keyed by stream id
and restored at start, so a restart neither re-warms (no false alarm) nor forgets an
alarm that is up. Pickles are only read from ragpulse's own state topic: give write
access to that topic to ragpulse alone.
"""

from __future__ import annotations

import logging
import pickle
import time
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from monitors.alarms import AlarmEvent, AlarmPolicy, MonitoredStream, StreamKey

__all__ = ["DriftMonitor", "DriftSettings"]

log = logging.getLogger(__name__)

#: rate metrics that only make sense on events labelled with an expected behaviour
_NEEDS_LABEL = {"false_rejection": "answer", "false_acceptance": "reject"}


class DriftSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="run drift detectors on the event streams")
    rate_metrics: list[str] = Field(
        default_factory=lambda: [
            "refusal",
            "false_rejection",
            "training_cutoff_excuse",
            "invented_identifier",
            "pii_leak",
            "invalid_citation",
        ],
        description="0/1 streams: failure modes, or `refusal` for any refusal",
    )
    rate_detectors: list[dict[str, Any]] = Field(
        default_factory=lambda: [{"type": "proportion"}],
        description="drift detectors for rate streams, e.g. {type: proportion}",
    )
    score_metrics: list[str] = Field(
        default_factory=lambda: [
            "faithfulness",
            "answer_relevance",
            "context_relevance",
            "answer_correctness",
            "compound",
        ],
        description="judge score streams (sampled turns)",
    )
    score_detectors: list[dict[str, Any]] = Field(
        default_factory=lambda: [{"type": "page_hinkley"}],
        description="drift detectors for score streams, e.g. {type: page_hinkley}",
    )
    key_by_service: bool = Field(False, description="one stream per service (bounded labels)")
    min_hold_s: float = Field(300.0, ge=0, description="an alarm stays up at least this long")
    clear_after_s: float = Field(600.0, ge=0, description="quiet time in band before clearing")
    band_abs: float = Field(0.02, ge=0, description="reference band, absolute")
    band_rel: float = Field(0.25, ge=0, description="reference band, relative to the reference")
    snapshot_every_s: float = Field(30.0, gt=0, description="state snapshot period")


class DriftMonitor:
    def __init__(
        self,
        settings: DriftSettings,
        cap_service: Callable[[str | None], str] | None = None,
        clock: Callable[[], float] = time.time,
        on_stream: Callable[[StreamKey], None] | None = None,
    ) -> None:
        """`on_stream(key)` is called once per stream when it is created or restored (the
        exporter declares the stream's alarm gauge at 0 then, so a raise is a change)."""
        self.settings = settings
        self._on_stream = on_stream or (lambda key: None)
        self.policy = AlarmPolicy(
            min_hold_s=settings.min_hold_s,
            clear_after_s=settings.clear_after_s,
            band_abs=settings.band_abs,
            band_rel=settings.band_rel,
        )
        self._cap = cap_service or (lambda s: s or "unknown")
        self._clock = clock
        self.streams: dict[str, MonitoredStream] = {}
        # (metric, detector type, service) -> (stream id, stream): the per-event lookup
        # without a StreamKey; the id checks that `streams` still holds that stream
        self._by_key: dict[tuple[str, str, str], tuple[str, MonitoredStream]] = {}
        from monitors.drift import create_drift_detector

        self._create = create_drift_detector
        for spec in [*settings.rate_detectors, *settings.score_detectors]:
            create_drift_detector(spec)  # fail at start on a bad spec

    def _stream(self, metric: str, spec: Mapping[str, Any], service: str) -> MonitoredStream:
        fast = (metric, spec["type"], service)
        hit = self._by_key.get(fast)
        if hit is not None and self.streams.get(hit[0]) is hit[1]:
            return hit[1]
        key = StreamKey(metric, str(spec["type"]), service)
        stream = self.streams.get(key.id)
        if stream is None:
            stream = MonitoredStream(key, self._create(spec), self.policy)
            self.streams[key.id] = stream
            self._on_stream(key)
        self._by_key[fast] = (key.id, stream)
        return stream

    def observe(
        self,
        failure_modes: list[str],
        categories: AbstractSet[tuple[str, str]],
        expected_behavior: str | None,
        service: str | None,
    ) -> list[AlarmEvent]:
        """Feed one scored event; return the alarm transitions it caused."""
        st = self.settings
        if not st.enabled:
            return []
        now = self._clock()
        svc = self._cap(service) if st.key_by_service else "all"
        events: list[AlarmEvent] = []
        by_key, streams, specs = self._by_key, self.streams, st.rate_detectors
        for metric in st.rate_metrics:
            needed = _NEEDS_LABEL.get(metric)
            if needed is not None and expected_behavior != needed:
                continue
            if metric == "refusal":
                x = 1.0 if ("refusal", "refusal") in categories else 0.0
            else:
                x = 1.0 if metric in failure_modes else 0.0
            for spec in specs:
                hit = by_key.get((metric, spec["type"], svc))  # _stream's fast path, inlined
                if hit is not None and streams.get(hit[0]) is hit[1]:
                    event = hit[1].update(x, now)
                else:
                    event = self._stream(metric, spec, svc).update(x, now)
                if event is not None:
                    events.append(event)
        return events

    def observe_scores(self, scores: Mapping[str, float], service: str | None) -> list[AlarmEvent]:
        """Feed the judge scores of one sampled event; return the alarm transitions."""
        if not self.settings.enabled:
            return []
        now = self._clock()
        svc = self._cap(service) if self.settings.key_by_service else "all"
        events: list[AlarmEvent] = []
        for metric in self.settings.score_metrics:
            if metric not in scores:
                continue
            for spec in self.settings.score_detectors:
                event = self._stream(metric, spec, svc).update(scores[metric], now)
                if event is not None:
                    events.append(event)
        return events

    def rebaseline(self) -> list[AlarmEvent]:
        """Operator command for every stream; returns the alarms it cleared."""
        now = self._clock()
        return [e for s in self.streams.values() if (e := s.rebaseline(now)) is not None]

    def active(self) -> list[StreamKey]:
        return [s.key for s in self.streams.values() if s.active]

    def snapshot(self) -> dict[str, bytes]:
        return {key: pickle.dumps(stream) for key, stream in self.streams.items()}

    def restore(self, state: Mapping[str, bytes]) -> int:
        """Load snapshots (latest per stream id); unreadable ones are skipped and logged."""
        restored = 0
        st = self.settings
        wanted = {(m, str(spec["type"])) for m in st.rate_metrics for spec in st.rate_detectors} | {
            (m, str(spec["type"])) for m in st.score_metrics for spec in st.score_detectors
        }
        for key, blob in state.items():
            metric, detector, *_ = key.split("|")
            if (metric, detector) not in wanted:
                continue  # configuration changed since the snapshot
            try:
                stream = pickle.loads(blob)
            except Exception as exc:  # a bad snapshot must not stop the sidecar
                log.warning(
                    "drift state %s unreadable (%s); starting it fresh", key, type(exc).__name__
                )
                continue
            if isinstance(stream, MonitoredStream) and stream.key.id == key:
                stream.policy = self.policy
                self.streams[key] = stream
                self._on_stream(stream.key)
                restored += 1
        return restored
