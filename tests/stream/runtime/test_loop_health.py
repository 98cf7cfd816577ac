"""The log-flood guard and the event-loop lag gauge of the sidecar."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from prometheus_client import CollectorRegistry

from stream.runtime.loop_health import LogThrottle, watch_loop_lag


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_throttle_passes_the_first_then_one_per_period_with_a_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    handler = _Collect()
    handler.addFilter(LogThrottle(every_s=30))
    noisy = logging.getLogger("aiokafka.conn.test")
    ours = logging.getLogger("stream.runtime.engine_faust.test")
    for lg in (noisy, ours):
        lg.addHandler(handler)
        lg.propagate = False
    try:
        for _ in range(100):
            noisy.error("Unable connect to node with id %s: %s", 1, "refused")
            ours.warning("broker unreachable")
            now[0] += 0.1  # 100 attempts in 10 s
        now[0] += 25
        noisy.error("Unable connect to node with id %s: %s", 1, "refused")
        noisy.error("Unable to update metadata from %s", [1])  # another template
    finally:
        for lg in (noisy, ours):
            lg.removeHandler(handler)
            lg.propagate = True
    kafka = [line for line in handler.lines if "node" in line or "metadata" in line]
    assert kafka == [
        "Unable connect to node with id 1: refused",
        "Unable connect to node with id 1: refused [99 similar suppressed in 30s]",
        "Unable to update metadata from [1]",
    ]
    assert handler.lines.count("broker unreachable") == 100  # ragpulse's own: untouched


def test_loop_lag_gauge_sees_a_blocked_loop() -> None:
    registry = CollectorRegistry()

    async def go() -> float:
        task = asyncio.create_task(watch_loop_lag(registry, every_s=0.05))
        await asyncio.sleep(0.12)
        time.sleep(0.3)  # noqa: ASYNC251 - the point: a blocking call on the event loop
        await asyncio.sleep(0.01)
        value = registry.get_sample_value("ragpulse_event_loop_lag_seconds")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return value or 0.0

    assert asyncio.run(go()) >= 0.2
    assert registry.get_sample_value("ragpulse_event_loop_lag_seconds") is None  # unregistered
