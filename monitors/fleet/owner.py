"""The per-stream stage on the owner, without Kafka: merge, release, detect, state.

:class:`FleetOwner` holds the series of the observation partitions this replica owns.
For each series: a :class:`~monitors.fleet.series.SeriesMerger`, the observation offset
its state covers, the operator commands it applied and an outbox of alarm transitions.
The runtime (:mod:`stream.runtime.fleet_owner`) moves records in and out; everything
that decides is here, so one process can run it too (tests, benchmarks).
"""

from __future__ import annotations

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
    def __init__(self, settings: DriftSettings, monitor: DriftMonitor, group: str) -> None:
        self.settings, self.monitor, self.group = settings, monitor, group
        self.partitions: dict[int, dict[str, OwnedSeries]] = {}

    # ------------------------------------------------------------------ ownership
    def assign(self, partition: int) -> None:
        self.partitions.setdefault(partition, {})

    def restore(self, partition: int, rec: SeriesRecord) -> OwnedSeries:
        """Adopt one validated changelog record (RecordError / StateError when it is bad)."""
        kind, metric, service = split_series(rec.series)
        if rec.partition != partition:
            raise RecordError("inconsistent", "state record of another partition")
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
        kind, metric, _service = split_series(rec.series)
        if metric not in self.monitor.metrics_of(cast(Kind, kind)):
            return "unconfigured"
        owned = owned_part.get(rec.series)
        if owned is None:
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
                    owned.outbox.append(event.to_dict())
            applied = "applied"
        return applied

    def release(self, now_s: float) -> list[tuple[OwnedSeries, list[AlarmEvent]]]:
        """Feed every due interval to the detectors; the series whose alarms changed."""
        lateness = int(self.settings.allowed_lateness_s * 1000)
        now_ms = int(now_s * 1000)
        changed = []
        for owned in self.series():
            kind, metric, service = split_series(owned.sid)
            events: list[AlarmEvent] = []
            for end_ms, samples in owned.merger.release(now_ms, lateness):
                events += self.monitor.feed(cast(Kind, kind), metric, service, samples,
                                            end_ms / 1000)  # fmt: skip
                owned.dirty = True
            owned.merger.forget_producers_before(now_ms - int(self.settings.max_lateness_s * 1000))
            if events:
                owned.outbox.extend(e.to_dict() for e in events)
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
