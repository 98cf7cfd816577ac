"""Lifecycle steps of `SidecarBase.run` that need none of its parts: the connect retry and
heap trimming.

The log lines keep the logger name `stream.runtime.engine`, where they were written
before these steps were split out (a log filter on that name keeps working).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from stream.platform.heap import trim_heap
from stream.runtime.fleet import FleetDrift
from stream.runtime.kafka_config import ensure_topics
from stream.runtime.kafka_retry import Backoff, classify
from stream.runtime.settings import Settings

__all__ = ["connect", "trim_heap_every"]

log = logging.getLogger("stream.runtime.engine")  # unchanged since the split: log filters


async def connect(
    settings: Settings,
    fleet: FleetDrift | None,
    engine_start: Callable[[], Coroutine[Any, Any, None]],
    stop: asyncio.Event,
) -> bool:
    """Topics, drift state, engine start; retried with backoff while the broker is away.

    /healthz stays 200 and /readyz 503 meanwhile, so Kubernetes neither restarts the
    container nor (in standalone mode) routes to it. Returns False when stopped first
    or on a non-transient error.
    """
    s = settings
    delays = Backoff().delays()
    attempt = 0
    while not stop.is_set():
        attempt += 1
        try:
            if s.kafka.create_topics:
                await ensure_topics(s.kafka)
            if fleet is not None:
                await fleet.start()
            await engine_start()
            return True
        except Exception as exc:
            if classify(exc) == "give_up":
                log.error("cannot start: %s: %s", type(exc).__name__, exc)
                return False
            delay = next(delays)
            if attempt <= 3 or attempt % 10 == 0:  # bounded logging while the broker is away
                log.warning(
                    "broker %s unreachable (%s), attempt %d; retrying in %.1fs",
                    s.kafka.bootstrap_servers, type(exc).__name__, attempt, delay,
                )  # fmt: skip
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(delay, 0.01))
    return False


async def trim_heap_every(every_s: float) -> None:
    """Return the C heap's free pages to the OS every `every_s` seconds (0: never)."""
    while every_s > 0:
        await asyncio.sleep(every_s)
        trim_heap()
