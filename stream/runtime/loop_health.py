"""Process health helpers of the sidecar: event-loop lag gauge and a log-flood guard.

`watch_loop_lag` measures how late the event loop wakes up from a short sleep and
exports it as `ragpulse_event_loop_lag_seconds` (a stuck detector or a blocking call
shows here before it shows as consumer lag).

`LogThrottle` keeps a broker outage from flooding the log: aiokafka logs every failed
connection attempt at ERROR (tens of lines a second while the broker is down). The
throttle lets the first record of each (logger, message template) through, then at most
one per `every_s`, suffixed with how many similar records it suppressed meanwhile. It
only throttles the client libraries' loggers; ragpulse's own lines are already bounded.
"""

from __future__ import annotations

import asyncio
import logging
import time

from prometheus_client import CollectorRegistry, Gauge

__all__ = ["LogThrottle", "install_log_throttle", "watch_loop_lag"]

#: loggers whose repeated records are throttled (the Kafka clients and faust's runtime, and
#: the drift stage's Kafka parts, which retry on every tick while the broker is away)
THROTTLED = ("aiokafka", "kafka", "faust", "mode", "stream.runtime.fleet",
             "stream.runtime.fleet_owner", "stream.runtime.fleet_changelog")  # fmt: skip


class LogThrottle(logging.Filter):
    def __init__(self, every_s: float = 30.0, prefixes: tuple[str, ...] = THROTTLED) -> None:
        super().__init__()
        self.every_s = every_s
        self.prefixes = prefixes
        self._last: dict[tuple[str, str], float] = {}
        self._suppressed: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        if not any(name == p or name.startswith(p + ".") for p in self.prefixes):
            return True
        key = (name, str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.every_s:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        if len(self._last) > 1000:  # bounded: templates are few; forget everything if not
            self._last.clear()
            self._suppressed.clear()
        self._last[key] = now
        skipped = self._suppressed.pop(key, 0)
        if skipped:
            record.msg = f"{record.msg} [{skipped} similar suppressed in {self.every_s:.0f}s]"
        return True


def install_log_throttle(every_s: float = 30.0) -> LogThrottle:
    """Attach one throttle to every root handler (handler filters see propagated records)."""
    root = logging.getLogger()
    for handler in root.handlers:
        for f in handler.filters:
            if isinstance(f, LogThrottle):
                return f
    throttle = LogThrottle(every_s)
    for handler in root.handlers:
        handler.addFilter(throttle)
    return throttle


def loop_lag_gauge(registry: CollectorRegistry) -> Gauge:
    return Gauge(
        "ragpulse_event_loop_lag_seconds",
        "How late the sidecar's event loop woke from a short sleep (last sample)",
        registry=registry,
    )


async def watch_loop_lag(registry: CollectorRegistry, every_s: float = 0.5) -> None:
    """Sample event-loop lag every `every_s` until cancelled."""
    gauge = loop_lag_gauge(registry)
    loop = asyncio.get_running_loop()
    try:
        while True:
            started = loop.time()
            await asyncio.sleep(every_s)
            gauge.set(max(0.0, loop.time() - started - every_s))
    finally:
        registry.unregister(gauge)
