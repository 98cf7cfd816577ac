"""The owner's merge of one series: every replica's intervals, in order, each merged once.

:class:`SeriesMerger` takes the :class:`~monitors.fleet.records.Observation` records of
one series from every replica and releases merged intervals in time order once the
owner's clock has passed an interval's end plus `lateness_ms` (the allowance for
replicas whose records arrive later). A record is recognised by its producer and
interval, so a replay (a producer retry, or the records a new owner re-reads after a
takeover) is merged once. A record for an interval already released is *late*: it is
merged into the next release and counted, never dropped silently; only records older
than `horizon_ms`, or from the future, are refused (and counted).

A released interval becomes samples for the drift detectors: a rate interval's `k`
ones spread evenly among its `n` events, a score interval's scores sorted. Merging
counts is order-free, so one replica or eight give the detectors the same samples.
`max_samples` bounds the samples one interval feeds (above it, n and k are scaled down
keeping the rate), so no record can stall the owner.

The merger's state is plain data (:meth:`to_state` / :meth:`from_state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from monitors.fleet.records import Observation

__all__ = ["MergerState", "SeriesMerger", "spread"]

MAX_PRODUCERS = 256
MAX_PENDING = 1024  # intervals waiting for release (the lateness horizon holds ~600)
MAX_INTERVAL_SCORES = 4096  # judge scores one merged interval keeps


def spread(n: int, k: int) -> list[float]:
    """n samples with k ones, spread evenly (deterministic)."""
    out = [0.0] * n
    for j in range(k):
        out[min(n - 1, (2 * j + 1) * n // (2 * k))] = 1.0
    return out


class _Pending(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    start: Annotated[int, Meta(ge=0)]
    end: Annotated[int, Meta(ge=0)]
    n: Annotated[int, Meta(ge=0)] = 0
    k: Annotated[int, Meta(ge=0)] = 0
    scores: Annotated[list[Annotated[float, Meta(ge=0.0, le=1.0)]], Meta(max_length=65536)] = []


class MergerState(msgspec.Struct, forbid_unknown_fields=True):
    hw: Annotated[dict[str, tuple[int, int]], Meta(max_length=MAX_PRODUCERS)]
    pending: Annotated[list[_Pending], Meta(max_length=MAX_PENDING)]
    late: _Pending
    released_until: Annotated[int, Meta(ge=0)]


class SeriesMerger:
    def __init__(self, max_samples: int = 20_000) -> None:
        self.max_samples = max_samples
        self.hw: dict[str, tuple[int, int]] = {}  # producer -> last (interval, part) merged
        self.pending: dict[int, _Pending] = {}
        self.late = _Pending(0, 0)
        self.released_until = 0

    def offer(
        self, obs: Observation, now_ms: int, horizon_ms: int, future_ms: int
    ) -> str:  # fmt: skip
        """Merge one record: "merged", "late", "duplicate", "too_late" or "future"."""
        if obs.interval > now_ms + future_ms:
            return "future"
        end = obs.interval + obs.interval_ms
        if end < now_ms - horizon_ms:
            return "too_late"
        mark = (obs.interval, obs.part)
        last = self.hw.get(obs.producer)
        if last is not None and mark <= tuple(last):
            return "duplicate"
        if last is None and len(self.hw) >= MAX_PRODUCERS:
            self._forget_oldest_producer()
        self.hw[obs.producer] = mark
        late = obs.interval < self.released_until
        if late:
            target = self.late
        else:
            target = self.pending.get(obs.interval)  # type: ignore[assignment]
            if target is None:
                if len(self.pending) >= MAX_PENDING:
                    return "future"  # cannot happen within the future allowance; bounded anyway
                target = self.pending[obs.interval] = _Pending(obs.interval, end)
        target.n += obs.n
        target.k += obs.k
        if obs.scores:
            room = MAX_INTERVAL_SCORES - len(target.scores)
            target.scores.extend(obs.scores[: max(0, room)])
        return "late" if late else "merged"

    def _forget_oldest_producer(self) -> None:
        oldest = min(self.hw, key=lambda p: self.hw[p])
        del self.hw[oldest]

    def release(
        self, now_ms: int, lateness_ms: int, budget: int | None = None
    ) -> list[tuple[int, list[float]]]:
        """The intervals due by `now_ms` as (end ms, samples), late records first; at most
        about `budget` samples (the rest stays pending for the next call)."""
        out: list[tuple[int, list[float]]] = []
        left = budget if budget is not None else 1 << 62
        late = self.late
        if late.n or late.scores:
            out.append((now_ms, self._samples(late)))
            left -= len(out[-1][1])
            self.late = _Pending(0, 0)
        for start in sorted(self.pending):
            item = self.pending[start]
            if item.end + lateness_ms > now_ms or left <= 0:
                break
            del self.pending[start]
            self.released_until = max(self.released_until, item.end)
            out.append((item.end, self._samples(item)))
            left -= len(out[-1][1])
        return out

    def _samples(self, item: _Pending) -> list[float]:
        if item.scores:
            return sorted(item.scores)[: self.max_samples]
        n, k = item.n, item.k
        if n > self.max_samples:  # keep the rate, bound the work
            k = round(k * self.max_samples / n)
            n = self.max_samples
        return spread(n, k)

    def forget_producers_before(self, interval_ms: int) -> None:
        """Drop the marks of producers silent since before `interval_ms` (bounded state)."""
        for producer in [p for p, (iv, _) in self.hw.items() if iv < interval_ms]:
            del self.hw[producer]

    # ------------------------------------------------------------------ state as data
    def to_state(self) -> dict[str, Any]:
        state = MergerState(
            hw=dict(self.hw),
            pending=[self.pending[s] for s in sorted(self.pending)],
            late=self.late,
            released_until=self.released_until,
        )
        return msgspec.to_builtins(state)

    @classmethod
    def from_state(cls, state: Mapping[str, Any], max_samples: int = 20_000) -> SeriesMerger:
        """Rebuild from :meth:`to_state` data; msgspec.ValidationError when it does not fit."""
        st = msgspec.convert(state, MergerState)
        merger = cls(max_samples)
        merger.hw = {p: (int(a), int(b)) for p, (a, b) in st.hw.items()}
        for item in st.pending:
            if item.end <= item.start or item.k > item.n:
                raise msgspec.ValidationError("pending interval is inconsistent")
            merger.pending[item.start] = item
        if st.late.k > st.late.n:
            raise msgspec.ValidationError("late interval is inconsistent")
        merger.late = st.late
        merger.released_until = st.released_until
        return merger
