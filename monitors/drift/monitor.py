"""Online drift monitoring of the per-event streams, with alarms; state as plain data.

Every scored event feeds one 0/1 value per configured *rate metric* (a failure mode,
or `refusal` for any refusal) into each configured drift detector; judge scores feed
score detectors the same way. Each (metric, detector[, service]) is a
:class:`~monitors.drift.alarms.MonitoredStream`; the set is bounded by configuration.

In one process (`ragpulse score`, `eval`, the tests) :meth:`DriftMonitor.observe` feeds
the detectors directly. In a consumer group the owner of a series feeds them merged
intervals through :meth:`DriftMonitor.feed` (see :mod:`monitors.fleet`): the same
detector code either way. A stream's state is data written by `to_state` and checked by
`from_state` (never a pickle: docs/drift.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Literal

from pydantic import Field

from monitors.drift.alarms import AlarmEvent, AlarmPolicy, MonitoredStream, StreamKey
from stream.contract.sections import ComponentDict, Section

__all__ = ["DriftMonitor", "DriftSettings", "Kind"]

Kind = Literal["rate", "score"]

log = logging.getLogger(__name__)

#: rate metrics that only make sense on events labelled with an expected behaviour
_NEEDS_LABEL = {"false_rejection": "answer", "false_acceptance": "reject"}


class DriftSettings(Section):
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
    rate_detectors: list[ComponentDict] = Field(
        default_factory=lambda: [{"type": "proportion"}],
        description="drift detectors for rate streams: a name, or {type: name, ...options},"
        " e.g. {type: proportion}",
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
    score_detectors: list[ComponentDict] = Field(
        default_factory=lambda: [{"type": "page_hinkley"}],
        description="drift detectors for score streams: a name, or {type: name, ...options},"
        " e.g. {type: page_hinkley}",
    )
    key_by_service: bool = Field(False, description="one stream per service (bounded labels)")
    min_hold_s: float = Field(300.0, ge=0, description="an alarm stays up at least this long")
    clear_after_s: float = Field(600.0, ge=0, description="quiet time in band before clearing")
    band_abs: float = Field(0.02, ge=0, description="reference band, absolute")
    band_rel: float = Field(0.25, ge=0, description="reference band, relative to the reference")
    snapshot_every_s: float = Field(30.0, gt=0, description="state snapshot period")
    interval_s: float = Field(
        1.0,
        gt=0,
        le=60,
        description="replicas aggregate their observations over this interval"
        " before they send them to a series' owner (the extra traffic is per series per interval)",
    )
    allowed_lateness_s: float = Field(
        2.0,
        ge=0,
        le=600,
        description="the owner waits this long after an interval's end for"
        " every replica's records before it feeds the interval to the detectors",
    )
    max_lateness_s: float = Field(
        600.0,
        gt=0,
        description="records older than this are refused and counted"
        ' (ragpulse_observations_total{outcome="too_late"}); later ones are merged late',
    )
    max_samples_per_interval: int = Field(
        20_000,
        ge=100,
        description="samples one merged interval feeds a detector at most"
        " (above it n and k are scaled down, keeping the rate)",
    )


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
        if not self.settings.enabled:
            return []
        now, svc = self._clock(), self.service_label(service)
        events: list[AlarmEvent] = []
        for metric, x in self.rate_samples(failure_modes, categories, expected_behavior):
            events.extend(self.feed("rate", metric, svc, (x,), now))
        return events

    def observe_scores(self, scores: Mapping[str, float], service: str | None) -> list[AlarmEvent]:
        """Feed the judge scores of one sampled event; return the alarm transitions."""
        if not self.settings.enabled:
            return []
        now, svc = self._clock(), self.service_label(service)
        events: list[AlarmEvent] = []
        for metric in self.settings.score_metrics:
            if metric in scores:
                events.extend(self.feed("score", metric, svc, (scores[metric],), now))
        return events

    def rebaseline(self) -> list[AlarmEvent]:
        """Operator command for every stream; returns the alarms it cleared."""
        now = self._clock()
        return [e for s in self.streams.values() if (e := s.rebaseline(now)) is not None]

    def active(self) -> list[StreamKey]:
        return [s.key for s in self.streams.values() if s.active]

    # ------------------------------------------------------------------ the owner's API
    def specs(self, kind: Kind) -> list[dict[str, Any]]:
        st = self.settings
        return st.rate_detectors if kind == "rate" else st.score_detectors

    def metrics_of(self, kind: Kind) -> list[str]:
        st = self.settings
        return st.rate_metrics if kind == "rate" else st.score_metrics

    def rate_samples(
        self,
        failure_modes: list[str],
        categories: AbstractSet[tuple[str, str]],
        expected_behavior: str | None,
    ) -> list[tuple[str, float]]:
        """One event's 0/1 indicator per configured rate metric (what `observe` feeds)."""
        out: list[tuple[str, float]] = []
        for metric in self.settings.rate_metrics:
            needed = _NEEDS_LABEL.get(metric)
            if needed is not None and expected_behavior != needed:
                continue
            if metric == "refusal":
                out.append((metric, 1.0 if ("refusal", "refusal") in categories else 0.0))
            else:
                out.append((metric, 1.0 if metric in failure_modes else 0.0))
        return out

    def service_label(self, service: str | None) -> str:
        return self._cap(service) if self.settings.key_by_service else "all"

    def feed(
        self, kind: Kind, metric: str, service: str, samples: Iterable[float], now: float
    ) -> list[AlarmEvent]:
        """Merged samples of one series at time `now`; the alarm transitions they caused."""
        events: list[AlarmEvent] = []
        streams = [self._stream(metric, spec, service) for spec in self.specs(kind)]
        for x in samples:
            for stream in streams:
                event = stream.update(x, now)
                if event is not None:
                    events.append(event)
        return events

    def series_streams(self, kind: Kind, metric: str, service: str) -> list[MonitoredStream]:
        """The streams of one series that exist (created by `feed` or `load_series`)."""
        out = []
        for spec in self.specs(kind):
            stream = self.streams.get(StreamKey(metric, str(spec["type"]), service).id)
            if stream is not None:
                out.append(stream)
        return out

    def series_state(self, kind: Kind, metric: str, service: str) -> dict[str, dict[str, Any]]:
        """{detector type: stream state as data} for one series."""
        return {s.key.detector: s.to_state() for s in self.series_streams(kind, metric, service)}

    def load_series(
        self, kind: Kind, metric: str, service: str, states: Mapping[str, Mapping[str, Any]]
    ) -> int:
        """Restore one series' streams from data; StateError (nothing loaded) when one fails.

        States of detectors no longer configured are ignored (configuration changed)."""
        built: list[MonitoredStream] = []
        for spec in self.specs(kind):
            state = states.get(str(spec["type"]))
            if state is None:
                continue
            stream = MonitoredStream.from_state(state, spec, self.policy)
            if stream.key != StreamKey(metric, str(spec["type"]), service):
                from monitors.drift.base import StateError

                raise StateError("spec_mismatch", "stream state of another series")
            built.append(stream)
        for stream in built:
            self.streams[stream.key.id] = stream
            self._on_stream(stream.key)
        return len(built)

    def drop_series(self, kind: Kind, metric: str, service: str) -> list[StreamKey]:
        """Forget one series' streams (ownership moved away); their keys."""
        keys = [s.key for s in self.series_streams(kind, metric, service)]
        for key in keys:
            self.streams.pop(key.id, None)
        self._by_key = {k: v for k, v in self._by_key.items() if v[0] in self.streams}
        return keys
