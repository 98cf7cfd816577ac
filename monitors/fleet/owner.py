"""The per-stream stage on the owner, without Kafka: merge, release, detect, state.

:class:`FleetOwner` holds the series of the observation partitions this replica owns.
For each series: a :class:`~monitors.fleet.series.SeriesMerger`, the observation offset
its state covers, the operator commands it applied and an outbox of alarm transitions.
The runtime (:mod:`stream.runtime.fleet_owner`) moves records in and out; everything
that decides is here, so one process can run it too (tests, benchmarks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from monitors.drift.alarms import AlarmEvent
from monitors.drift.monitor import DriftMonitor, DriftSettings, Kind
from monitors.fleet.records import Command, Observation, RecordError, split_series
from monitors.fleet.series import SeriesMerger
from monitors.fleet.state import STATE_VERSION, AlarmRecord, SeriesRecord

__all__ = ["FleetOwner", "OwnedSeries"]


@dataclass
class OwnedSeries:
    sid: str
    partition: int
    merger: SeriesMerger
    offset: int = 0  # observation records below this offset are in the state
    commands: list[str] = field(default_factory=list)
    outbox: list[dict[str, Any]] = field(default_factory=list)
    dirty: bool = False


class FleetOwner:
    #: samples one `release` call feeds at most, over all series (~0.3 s of detector work):
    #: a backlog, however it was made, is worked off over several ticks, never in one
    TICK_BUDGET = 100_000
    #: series one replica owns at most (each is a set of streams and Prometheus series)
    MAX_SERIES = 2_000

    def __init__(self, settings: DriftSettings, monitor: DriftMonitor, group: str) -> None:
        self.settings, self.monitor, self.group = settings, monitor, group
        self.partitions: dict[int, dict[str, OwnedSeries]] = {}
        self.exports: list[AlarmEvent] = []  # new transitions, exported once by the runtime
        self._interval_ms = max(1, round(settings.interval_s * 1000))

    def configured(self, kind: str, metric: str, service: str) -> bool:
        """Whether this configuration monitors the series (metric listed, service shape)."""
        if metric not in self.monitor.metrics_of(cast(Kind, kind)):
            return False
        return self.settings.key_by_service or service == "all"

    # ------------------------------------------------------------------ ownership
    def assign(self, partition: int) -> None:
        self.partitions.setdefault(partition, {})

    def restore(self, partition: int, rec: SeriesRecord) -> OwnedSeries | None:
        """Adopt one validated changelog record (RecordError / StateError when it is bad)."""
        kind, metric, service = split_series(rec.series)
        if rec.partition != partition:
            raise RecordError("inconsistent", "state record of another partition")
        if not self.configured(kind, metric, service):
            return None  # configuration changed since the snapshot: the series is dropped
        try:
            merger = SeriesMerger.from_state(rec.merger, self.settings.max_samples_per_interval)
        except (msgspec.ValidationError, TypeError, ValueError) as exc:
            raise RecordError("schema", f"merger state: {str(exc)[:160]}") from None
        self.monitor.load_series(cast(Kind, kind), metric, service, rec.streams)
        owned = OwnedSeries(rec.series, partition, merger, rec.offset, list(rec.commands),
                            [msgspec.to_builtins(a) for a in rec.outbox])  # fmt: skip
        self.partitions.setdefault(partition, {})[rec.series] = owned
        return owned

    def revoke(self, partition: int) -> list[OwnedSeries]:
        """Give a partition up: its series (snapshot them first) leave the monitor."""
        gone = list(self.partitions.pop(partition, {}).values())
        for owned in gone:
            kind, metric, service = split_series(owned.sid)
            self.monitor.drop_series(cast(Kind, kind), metric, service)
        return gone

    def series(self) -> list[OwnedSeries]:
        return [s for part in self.partitions.values() for s in part.values()]

    def seek_offset(self, partition: int) -> int | None:
        """Where to read a restored partition from: the lowest offset its states cover."""
        owned = self.partitions.get(partition)
        return min((s.offset for s in owned.values()), default=None) if owned else None

    # ------------------------------------------------------------------ records
    def offer(self, partition: int, offset: int, rec: Observation | Command, now_s: float) -> str:
        """One validated record at `offset`: its outcome (merged, late, duplicate, ...)."""
        owned_part = self.partitions.get(partition)
        if owned_part is None:
            return "not_owned"
        if isinstance(rec, Command):
            return self._command(owned_part, offset, rec, now_s)
        kind, metric, service = split_series(rec.series)
        if not self.configured(kind, metric, service):
            return "unconfigured"
        if rec.interval_ms != self._interval_ms or rec.interval % rec.interval_ms:
            return "rejected"  # every replica cuts time the same way, or it is not ours
        owned = owned_part.get(rec.series)
        if owned is None:
            if sum(len(p) for p in self.partitions.values()) >= self.MAX_SERIES:
                return "rejected"
            owned = owned_part[rec.series] = OwnedSeries(
                rec.series, partition, SeriesMerger(self.settings.max_samples_per_interval), offset
            )
        if offset < owned.offset:
            return "duplicate"  # already in the restored state
        st = self.settings
        outcome = owned.merger.offer(rec, int(now_s * 1000), int(st.max_lateness_s * 1000),
                                     int(max(60.0, st.allowed_lateness_s) * 1000))  # fmt: skip
        owned.offset = offset + 1
        owned.dirty = True
        return outcome

    def _command(
        self, owned_part: dict[str, OwnedSeries], offset: int, cmd: Command, now_s: float
    ) -> str:  # fmt: skip
        applied = "duplicate"
        for owned in owned_part.values():
            if offset < owned.offset or cmd.id in owned.commands:
                continue
            owned.commands = [*owned.commands[-31:], cmd.id]
            owned.offset, owned.dirty = offset + 1, True
            kind, metric, service = split_series(owned.sid)
            for stream in self.monitor.series_streams(cast(Kind, kind), metric, service):
                event = stream.rebaseline(now_s)
                if event is not None:
                    owned.outbox.append(_plain(event))
                    self.exports.append(event)
            applied = "applied"
        return applied

    def release(self, now_s: float) -> list[tuple[OwnedSeries, list[AlarmEvent]]]:
        """Feed every due interval to the detectors; the series whose alarms changed."""
        lateness = int(self.settings.allowed_lateness_s * 1000)
        now_ms = int(now_s * 1000)
        changed = []
        budget = self.TICK_BUDGET
        for owned in self.series():
            kind, metric, service = split_series(owned.sid)
            events: list[AlarmEvent] = []
            released = owned.merger.release(now_ms, lateness, max(budget, 0))
            budget -= sum(len(samples) for _, samples in released)
            for end_ms, samples in released:
                events += self.monitor.feed(cast(Kind, kind), metric, service, samples,
                                            end_ms / 1000)  # fmt: skip
                owned.dirty = True
            owned.merger.forget_producers_before(now_ms - int(self.settings.max_lateness_s * 1000))
            if events:
                owned.outbox.extend(_plain(e) for e in events)
                self.exports.extend(events)
                changed.append((owned, events))
        return changed

    def commanded(self) -> list[OwnedSeries]:
        """Series whose outbox holds transitions (after a command or a restore)."""
        return [s for s in self.series() if s.outbox]

    # ------------------------------------------------------------------ state as data
    def record(self, owned: OwnedSeries) -> SeriesRecord:
        kind, metric, service = split_series(owned.sid)
        return SeriesRecord(
            v=STATE_VERSION, group=self.group, series=owned.sid, partition=owned.partition,
            offset=owned.offset, merger=owned.merger.to_state(),
            streams=self.monitor.series_state(cast(Kind, kind), metric, service),
            commands=list(owned.commands),
            outbox=[msgspec.convert(a, AlarmRecord) for a in owned.outbox],
        )  # fmt: skip

    def active(self, on: Callable[[str, str, str], None]) -> int:
        """Call `on(metric, detector, service)` for every alarm that is up; their count."""
        count = 0
        for owned in self.series():
            kind, metric, service = split_series(owned.sid)
            for stream in self.monitor.series_streams(cast(Kind, kind), metric, service):
                if stream.active:
                    on(stream.key.metric, stream.key.detector, stream.key.service)
                    count += 1
        return count


def _plain(event: AlarmEvent) -> dict[str, Any]:
    """The alarm record, with a mean that is not a finite number written as null."""
    out = event.to_dict()
    for key in ("reference_mean", "current_mean"):
        value = out.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            out[key] = None
    return out
