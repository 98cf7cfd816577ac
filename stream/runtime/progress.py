"""Progress, not just liveness: lag and stall per partition, judged the way Burrow does.

Lag is what `kafka-consumer-groups --describe` shows: the partition's log-end offset
(ListOffsets, latest) minus the group's committed offset. A partition is *stalled* when
it has lag and its committed offset has not moved for `stall_after_s` seconds. An idle
partition (no lag) is never stalled, and neither is a slow one that still commits, nor
one the group has never committed (its lag is unknown).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PartitionProgress", "ProgressSettings", "ProgressTracker"]


class ProgressSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stall_after_s: float = Field(
        120.0, gt=0, description="lag > 0 and the committed offset still for this long: stalled"
    )
    readiness: bool = Field(
        False,
        description="a stalled partition makes /readyz 503 (the chart sets it in standalone mode)",
    )


@dataclass(frozen=True, slots=True)
class PartitionProgress:
    partition: int
    committed: int | None  # the group's committed offset (next offset to read)
    end: int  # log-end offset (high watermark)
    lag: int | None  # None while the group has committed nothing ("-" in the admin tools)
    stalled: bool


class ProgressTracker:
    """`update(partition, committed, end)` per probe; `stalled` lists the stuck partitions."""

    def __init__(self, stall_after_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.stall_after_s = stall_after_s
        self._clock = clock
        self._since: dict[int, tuple[int | None, float]] = {}  # committed, when it last moved
        self._state: dict[int, PartitionProgress] = {}

    def update(self, partition: int, committed: int | None, end: int) -> PartitionProgress:
        now = self._clock()
        # no committed offset (a new group, or `latest` with nothing read yet): the lag is
        # unknown, as `kafka-consumer-groups` shows it, and the partition is never stalled
        lag = None if committed is None else max(end - committed, 0)
        last = self._since.get(partition)
        if last is None or last[0] != committed or not lag:
            self._since[partition] = (committed, now)
            still = 0.0
        else:
            still = now - last[1]
        state = PartitionProgress(partition, committed, end, lag, still >= self.stall_after_s)
        self._state[partition] = state
        return state

    def retain(self, partitions: set[int]) -> list[int]:
        """Forget partitions no longer assigned; returns the forgotten ones."""
        gone = sorted(set(self._state) - partitions)
        for p in gone:
            self._state.pop(p, None)
            self._since.pop(p, None)
        return gone

    def committed(self, partition: int) -> int | None:
        """The committed offset last seen for `partition`."""
        state = self._state.get(partition)
        return state.committed if state is not None else None

    @property
    def stalled(self) -> list[int]:
        return sorted(p for p, s in self._state.items() if s.stalled)
