"""Health, readiness, lag and progress of a running sidecar (one part of `SidecarBase`).

Every `_LAG_EVERY_S` the probe asks the engine for the assigned partitions' log-end offsets
(this proves the broker answers) and the group's committed offsets, feeds them to the
`ProgressTracker` (lag and stall per partition, Burrow's rule) and exports
`ragpulse_consumer_*` and `ragpulse_ready`. `readiness()` is what `/readyz` serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from exporters import PromFamilies
from stream.runtime.progress import ProgressTracker
from stream.runtime.settings import Settings

__all__ = ["Health"]

log = logging.getLogger(__name__)

_LAG_EVERY_S = 5.0

Highwaters = Callable[[], Awaitable[dict[int, int]]]
Committed = Callable[[list[int]], Awaitable[dict[int, int | None]]]


class Health:
    """`/readyz` and the lag/progress probe; the engine supplies the offsets."""

    def __init__(
        self,
        settings: Settings,
        prom: PromFamilies,
        highwaters: Highwaters,
        committed: Committed,
        rebalancing: Callable[[], bool],
    ) -> None:
        self.settings, self.prom = settings, prom
        self._highwaters, self._committed, self._rebalancing = highwaters, committed, rebalancing
        self.progress = ProgressTracker(settings.progress.stall_after_s)
        self.started = False
        self.broker_ok = False
        self._broker_lost: float | None = None

    def readiness(self) -> tuple[bool, str]:
        if not self.started:
            return False, "starting"
        if self._rebalancing():
            return False, "rebalancing"
        if not self.broker_ok:
            return False, "broker unreachable"
        if self.settings.progress.readiness and self.progress.stalled:
            return False, f"stalled partitions {self.progress.stalled}"
        return True, "ok"

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(_LAG_EVERY_S if self.broker_ok else 1.0)
            await self.refresh()

    async def refresh(self) -> None:
        try:
            highwaters = await asyncio.wait_for(self._highwaters(), 5.0)
        except Exception as exc:  # any failure means we cannot see the broker now
            if self.broker_ok:
                log.warning("broker unreachable: %s", type(exc).__name__)
                self._broker_lost = time.monotonic()
            self.broker_ok = False
            self.prom.ready.set(0)
            return
        if not self.broker_ok and self._broker_lost is not None:
            log.warning("broker reachable again after %.1fs", time.monotonic() - self._broker_lost)
            self._broker_lost = None
        self.broker_ok = True
        try:  # the group coordinator may be slow while the broker answers: keep what we had
            committed = await asyncio.wait_for(self._committed(sorted(highwaters)), 5.0)
        except Exception as exc:
            log.warning("committed offsets unavailable: %s", type(exc).__name__)
            committed = {p: self.progress.committed(p) for p in highwaters}
        self._export(highwaters, committed)
        self.prom.ready.set(1 if self.readiness()[0] else 0)

    def _export(self, highwaters: dict[int, int], committed: dict[int, int | None]) -> None:
        m = self.prom
        for partition in self.progress.retain(set(highwaters)):
            families = (m.consumer_lag, m.consumer_stalled, m.consumer_committed, m.consumer_end)
            for family in families:
                with contextlib.suppress(KeyError):
                    family.remove(str(partition))
        before = set(self.progress.stalled)
        for partition, high in highwaters.items():
            done = committed.get(partition)
            state = self.progress.update(partition, done, high)
            label = str(partition)
            if state.lag is None:  # nothing committed yet: no lag sample, as in the admin tools
                with contextlib.suppress(KeyError):
                    m.consumer_lag.remove(label)
            else:
                m.consumer_lag.labels(label).set(state.lag)
            m.consumer_end.labels(label).set(high)
            if done is not None:
                m.consumer_committed.labels(label).set(done)
            m.consumer_stalled.labels(label).set(1 if state.stalled else 0)
            if state.stalled and partition not in before:
                log.warning("partition %d stalled: lag %d, committed offset %s unmoved for %.0fs",
                            partition, state.lag, done, self.progress.stall_after_s)  # fmt: skip
