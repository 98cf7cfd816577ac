"""The per-event side of the drift stage: aggregate a replica's observations per interval.

Every replica keeps counting on its own partitions: per rate series, events and ones;
per score series, the judge scores. Intervals are aligned to the wall clock
(``floor(t / interval)``), so every replica cuts time the same way and the owner can
merge their aggregates interval by interval. :meth:`ObservationBuffer.flush` returns
the records of the intervals that have closed; the runtime publishes them.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterable

from monitors.fleet.records import MAX_SCORES, RECORD_VERSION, Observation, series_id

__all__ = ["ObservationBuffer", "producer_id"]


def producer_id() -> str:
    """Unique per process lifetime: host, pid and a random part (a restart is a new one)."""
    host = socket.gethostname()[:80] or "host"
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class _Agg:
    __slots__ = ("k", "n", "scores", "tmax")

    def __init__(self) -> None:
        self.n = 0
        self.k = 0
        self.scores: list[float] = []
        self.tmax: int | None = None


class ObservationBuffer:
    """Counts per (series, interval) on the event path; O(1) per sample, no I/O."""

    def __init__(self, group: str, interval_s: float, producer: str | None = None) -> None:
        self.group = group
        self.interval_ms = max(1, round(interval_s * 1000))
        self.producer = producer or producer_id()
        self._open: dict[tuple[str, int], _Agg] = {}
        self.samples = 0  # total samples buffered (for tests and the bench)

    def _agg(self, sid: str, now_ms: int) -> _Agg:
        start = now_ms - now_ms % self.interval_ms
        key = (sid, start)
        agg = self._open.get(key)
        if agg is None:
            agg = self._open[key] = _Agg()
        return agg

    def add_rates(
        self, samples: Iterable[tuple[str, float]], service: str, now_s: float,
        event_time_ms: int | None = None,
    ) -> None:  # fmt: skip
        """One event's rate indicators: (metric, 0 or 1) pairs."""
        now_ms = int(now_s * 1000)
        for metric, x in samples:
            agg = self._agg(series_id("rate", metric, service), now_ms)
            agg.n += 1
            if x:
                agg.k += 1
            if event_time_ms is not None and (agg.tmax is None or event_time_ms > agg.tmax):
                agg.tmax = event_time_ms
            self.samples += 1

    def add_scores(self, scores: Iterable[tuple[str, float]], service: str, now_s: float) -> None:
        """One judged turn's scores: (metric, value in [0, 1]) pairs."""
        now_ms = int(now_s * 1000)
        for metric, value in scores:
            if not 0.0 <= value <= 1.0:  # NaN included: never publish what the owner rejects
                continue
            self._agg(series_id("score", metric, service), now_ms).scores.append(float(value))
            self.samples += 1

    def flush(self, now_s: float, everything: bool = False) -> list[Observation]:
        """The records of every interval that ended by `now_s` (all of them: `everything`)."""
        now_ms = int(now_s * 1000)
        out: list[Observation] = []
        for key in sorted(self._open):
            sid, start = key
            if not everything and start + self.interval_ms > now_ms:
                continue
            agg = self._open.pop(key)
            base = {
                "v": RECORD_VERSION, "group": self.group, "producer": self.producer,
                "series": sid, "interval": start, "interval_ms": self.interval_ms,
                "event_time_max": agg.tmax,
            }  # fmt: skip
            if sid.startswith("rate|"):
                out.append(Observation(**base, n=agg.n, k=agg.k))  # type: ignore[arg-type]
            else:
                for part, i in enumerate(range(0, len(agg.scores), MAX_SCORES)):
                    chunk = agg.scores[i : i + MAX_SCORES]
                    out.append(Observation(**base, part=part, scores=chunk))  # type: ignore[arg-type]
        return out

    def __len__(self) -> int:
        return len(self._open)
