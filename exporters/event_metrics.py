"""The per-event Prometheus updates of the detector path (one call per pipeline step).

`Pipeline.process` calls these for every message: consumed, invalid (with the reason),
duplicate, scored (detector hits, failure modes per service and prompt version, the
detect time), the sampling decision, and each drift-alarm transition. Label children
are resolved once and kept (prometheus-client's `labels()` validates and takes a lock on
every call; a dict lookup does not). Label values are capped before they get here, so
the cache is as bounded as the series.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from detectors import Detection
from exporters.prometheus import PromFamilies
from monitors.drift.alarms import AlarmEvent, StreamKey
from stream.contract.events import Event

__all__ = ["EventMetrics"]

log = logging.getLogger(__name__)

#: raw (service, model, prompt_version) triples remembered; past it, the caps run each time
_MAX_DEPLOYMENTS = 4096


class EventMetrics:
    """`PromFamilies` as the pipeline updates it, with cached label children."""

    def __init__(self, prom: PromFamilies) -> None:
        self.prom = prom
        self._cache: dict[tuple[int, tuple[str, ...]], Any] = {}
        # per raw (service, model, prompt_version): the scored child and the capped service
        # and prompt labels. A cap maps a value the same way once it has seen it (its seen
        # set only grows), so this skips the caps but not their first sight of a value;
        # values a cap replaced (other) are not remembered, so the keys stay bounded.
        self._deployments: dict[tuple[Any, Any, Any], tuple[Any, str, str, Any]] = {}
        self._consumed = self._child(prom.events, "consumed")
        self._scored = self._child(prom.events, "scored")

    def _child(self, family: Any, *values: str) -> Any:
        key = (id(family), values)
        child = self._cache.get(key)
        if child is None:
            child = self._cache[key] = family.labels(*values)
        return child

    def declare_detectors(self, detectors: Iterable[Any]) -> None:
        for det in detectors:
            self.prom.declare_detector(det.name, det.categories)

    def consumed(self) -> None:
        self._consumed.inc()
        self.prom.last_event.set(time.time())

    def invalid(self, reason: str) -> None:
        self._child(self.prom.events, "invalid").inc()
        self._child(self.prom.invalid, reason).inc()
        self.prom.slo.valid(False)  # every invalid message is dead-lettered

    def duplicate(self) -> None:
        self._child(self.prom.events, "duplicate").inc()
        self.prom.slo.valid(True)

    def scored(
        self,
        event: Event,
        detections: list[Detection],
        modes: list[str],
        elapsed: float,
        complete: bool = True,
    ) -> None:
        """One scored turn; `complete` False when a detector raised on it: its failure_free
        SLOs count it neither good nor bad (a crashed detector is no evidence of health)."""
        m, child = self.prom, self._child
        self._scored.inc()
        m.detect_seconds.observe(elapsed)
        raw = (event.service, event.model, event.prompt_version)
        deployment = self._deployments.get(raw)
        if deployment is None:
            service = m.cap_service(raw[0])
            prompt = m.cap_prompt(raw[2])
            model = m.cap_model(raw[1])
            slos = m.slo.for_deployment(raw[0], service, prompt)
            deployment = (child(m.scored, service, model, prompt), service, prompt, slos)
            # only values the caps kept as they are (bounded in number and length)
            kept = all(c == r or not r for r, c in zip(raw, (service, model, prompt), strict=True))
            if kept and len(self._deployments) < _MAX_DEPLOYMENTS:
                self._deployments[raw] = deployment
        scored, service, prompt, slos = deployment
        scored.inc()
        for bad_modes, good, bad in slos:  # failure_free SLOs
            if modes and not bad_modes.isdisjoint(modes):
                bad.inc()
            elif complete:
                good.inc()
        for valid in m.slo.valid_good:
            valid.inc()
        for d in detections:
            child(m.detector_hits, d.detector, d.category).inc()
        for mode in modes:
            child(m.failure_modes, mode, service, prompt).inc()

    def sampling(
        self,
        effective_rate: float,
        sampled: bool,
        reason: str | None,
        failure_modes: Sequence[str] = (),
    ) -> None:
        m = self.prom
        m.sample_rate.set(effective_rate)
        if sampled and reason is not None:
            self._child(m.sampled, reason).inc()
        elif reason in ("budget", "judge_backlog"):
            self._child(m.dropped, reason).inc()
            self.flagged_dropped(failure_modes, reason)

    def flagged_dropped(self, failure_modes: Sequence[str], reason: str) -> None:
        """A flagged turn left unjudged: counted per failure mode (few by construction)."""
        for mode in failure_modes:
            self.prom.dropped_flagged.labels(mode, reason).inc()

    def detector_error(self, name: str) -> None:
        self.prom.detector_errors.labels(name).inc()

    def declare_stream(self, key: StreamKey) -> None:
        """A new drift stream's alarm series start at 0: a raise is then a change that
        Prometheus sees (`changes()`, the dashboard's alarm annotation)."""
        self.prom.drift_alarm.labels(key.metric, key.detector, key.service)
        self.prom.drift_alarms.labels(key.metric, key.detector, key.service)

    def alarm(self, alarm: AlarmEvent) -> None:
        """One alarm transition: the gauge and counter, and one log line."""
        m = self.prom
        labels = (alarm.metric, alarm.detector, alarm.service)
        if alarm.state == "raised":
            m.drift_alarm.labels(*labels).set(1)
            m.drift_alarms.labels(*labels).inc()
            log.warning(
                "drift alarm raised: %s (%s, %s) %s from %.4f to %.4f",
                *labels, alarm.direction, alarm.reference_mean, alarm.current_mean,
            )  # fmt: skip
        else:
            m.drift_alarm.labels(*labels).set(0)
            log.info("drift alarm cleared: %s (%s, %s)", *labels)
