"""Lag and stall per partition (Burrow's rule), and what the sidecar exports from them."""

from __future__ import annotations

import asyncio
from typing import Any

from exporters import PromFamilies
from stream.runtime.engine import SidecarBase
from stream.runtime.pipeline import Pipeline
from stream.runtime.progress import ProgressTracker
from stream.runtime.settings import load_settings


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_stalled_only_with_lag_and_a_still_committed_offset() -> None:
    clock = Clock()
    t = ProgressTracker(60, clock)
    assert not t.update(0, 100, 150).stalled  # lag 50, just seen
    clock.now = 59
    assert not t.update(0, 100, 160).stalled
    clock.now = 60
    state = t.update(0, 100, 170)
    assert state.stalled and state.lag == 70 and t.stalled == [0]
    clock.now = 61
    assert not t.update(0, 101, 170).stalled  # it moved: the clock restarts
    clock.now = 500
    assert not t.update(1, 40, 40).stalled  # idle, no lag
    clock.now = 1000
    assert not t.update(1, 40, 40).stalled  # idle for long: still not stalled
    assert t.stalled == []


def test_committed_above_a_low_watermark_is_no_lag() -> None:
    """The embedded broker can report an end offset below the committed one."""
    t = ProgressTracker(1, Clock())
    assert t.update(0, 5002, 4979).lag == 0


def test_nothing_committed_is_unknown_lag_never_stalled_and_retain_forgets() -> None:
    """A group that has committed nothing (`latest` with no new traffic, say) has no lag to
    judge, as `kafka-consumer-groups` shows "-": it must not page as stalled. A consumer
    that never reads anything is RagpulseNoEvents' business."""
    clock = Clock()
    t = ProgressTracker(1, clock)
    assert t.update(3, None, 42).lag is None
    clock.now = 100
    assert not t.update(3, None, 42).stalled and t.stalled == []
    assert t.retain({0}) == [3] and t.stalled == []


class _Stub(SidecarBase):
    """Only the offset hooks, fed by the test."""

    ends: dict[int, int]
    done: dict[int, int | None]

    async def _highwaters(self) -> dict[int, int]:
        return self.ends

    async def _committed(self, partitions: list[int]) -> dict[int, int | None]:
        return {p: self.done.get(p) for p in partitions}

    def _rebalancing(self) -> bool:
        return False

    async def _engine_start(self) -> None:  # the stub never runs an engine
        raise AssertionError

    async def _engine_stop(self) -> None:
        raise AssertionError

    def _engine_failure(self) -> str | None:
        return None

    async def _send(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError


def _stub(readiness: bool) -> tuple[_Stub, PromFamilies]:
    settings = load_settings(progress={"stall_after_s": 30, "readiness": readiness})
    metrics = PromFamilies()
    sc = _Stub(settings, Pipeline(settings, metrics), metrics)
    clock = Clock()
    sc.health.progress = ProgressTracker(30, clock)
    sc.health.started = True
    sc.ends, sc.done = {0: 100, 1: 10}, {0: 40, 1: 10}
    return sc, metrics


def test_refresh_exports_lag_stall_and_readiness() -> None:
    sc, m = _stub(readiness=True)
    value = m.registry.get_sample_value
    asyncio.run(sc.refresh_lag())
    assert value("ragpulse_consumer_lag", {"partition": "0"}) == 60
    assert value("ragpulse_consumer_committed_offset", {"partition": "0"}) == 40
    assert value("ragpulse_consumer_end_offset", {"partition": "0"}) == 100
    assert value("ragpulse_consumer_stalled", {"partition": "0"}) == 0
    assert sc.readiness() == (True, "ok")
    sc.health.progress._clock.now = 31  # type: ignore[attr-defined]
    asyncio.run(sc.refresh_lag())
    assert value("ragpulse_consumer_stalled", {"partition": "0"}) == 1
    assert value("ragpulse_consumer_stalled", {"partition": "1"}) == 0
    assert sc.readiness() == (False, "stalled partitions [0]")
    assert value("ragpulse_ready") == 0
    sc.done[1] = None  # nothing committed (yet): no lag sample, not stalled
    asyncio.run(sc.refresh_lag())
    assert value("ragpulse_consumer_lag", {"partition": "1"}) is None
    assert value("ragpulse_consumer_stalled", {"partition": "1"}) == 0
    sc.ends = {1: 10}  # partition 0 revoked: its series go
    asyncio.run(sc.refresh_lag())
    assert value("ragpulse_consumer_lag", {"partition": "0"}) is None
    assert sc.readiness() == (True, "ok")


def test_stall_stays_out_of_readiness_by_default() -> None:
    """Sidecar mode: a stalled monitor must not take the RAG pod out of its Service."""
    sc, m = _stub(readiness=False)
    asyncio.run(sc.refresh_lag())
    sc.health.progress._clock.now = 31  # type: ignore[attr-defined]
    asyncio.run(sc.refresh_lag())
    assert m.registry.get_sample_value("ragpulse_consumer_stalled", {"partition": "0"}) == 1
    assert sc.readiness() == (True, "ok")


def test_a_failing_committed_fetch_keeps_the_broker_ready_and_the_last_offsets() -> None:
    """The group coordinator can be slow while the broker answers: readiness and the
    committed offsets stay as they were (no "broker unreachable")."""
    sc, m = _stub(readiness=True)
    asyncio.run(sc.refresh_lag())

    async def failing(partitions: list[int]) -> dict[int, int | None]:
        raise TimeoutError

    sc.health._committed = failing
    sc.ends = {0: 120, 1: 10}
    asyncio.run(sc.refresh_lag())
    assert sc.readiness() == (True, "ok")
    value = m.registry.get_sample_value
    assert value("ragpulse_consumer_committed_offset", {"partition": "0"}) == 40
    assert value("ragpulse_consumer_lag", {"partition": "0"}) == 80
