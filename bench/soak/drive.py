"""The soak's moving parts: the sidecar process and a fixed-rate producer."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from aiokafka import AIOKafkaProducer

from stream.demo import generate
from tests.support.sidecar import SidecarProcess, Topics

__all__ = ["Sidecar", "produce_at_rate"]


class Sidecar(SidecarProcess):
    """The soak's sidecar: its own topics, a log file in the temp folder."""

    def __init__(
        self,
        bootstrap: str,
        extra_env: dict[str, str] | None = None,
        trace_dir: Path | None = None,
        trace_frames: int = 1,
    ) -> None:
        super().__init__(bootstrap, Topics.unique("soak"), dict(extra_env or {}))
        if trace_dir is not None:  # tracemalloc snapshots on SIGUSR1 (bench/soak/traced.py)
            self.argv = ("-m", "bench.soak.traced", str(trace_dir), str(trace_frames))

    def start(self, timeout: float = 90.0) -> Sidecar:  # type: ignore[override]
        log = Path(tempfile.gettempdir()) / f"ragpulse-soak-{self.topics.group}.log"
        super().start(log, timeout)
        print(f"sidecar pid {self.pid}, log {log}", file=sys.stderr)
        return self


async def produce_at_rate(
    bootstrap: str,
    topic: str,
    rate: float,
    duration: float,
    stop: asyncio.Event | None = None,
    progress: list[int] | None = None,
    tick: float = 0.1,
    batch_bytes: int = 16384,
) -> int:
    """Send the bundled traffic (new event ids all along) at `rate` events/s for
    `duration` seconds or until `stop` is set; returns the count. ``progress[0]``, when
    given, is kept at the count sent so far. The events due are sent in a burst every
    `tick` seconds in record batches of up to `batch_bytes` (aiokafka's default 16 KiB
    holds two or three events): with a 1 s tick and 1 MiB, each partition gets about one
    batch per tick, and the embedded broker's cost grows with the batches it holds."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=batch_bytes
    )
    await producer.start()
    sent, index = 0, 0
    batch: list[tuple[bytes | None, bytes]] = []
    started = time.monotonic()
    try:

        def running() -> bool:
            return time.monotonic() - started < duration and not (stop and stop.is_set())

        while running():
            due = int((time.monotonic() - started) * rate) - sent
            # a broker that takes less than `rate` leaves a backlog: it is not sent after
            # the duration (a 2-hour soak once kept sending for minutes past its end)
            while due > 0 and (sent % 100 or running()):
                if not batch:
                    items = generate(1000, seed=3, start_index=index, malformed_rate=0.002)
                    batch = [(g.key, g.raw) for g in items][::-1]
                    index += 1000
                key, raw = batch.pop()
                await producer.send(topic, raw, key=key)
                sent += 1
                due -= 1
            if progress is not None:
                progress[0] = sent
            await asyncio.sleep(tick)
        await producer.flush()
    finally:
        await producer.stop()
    return sent
