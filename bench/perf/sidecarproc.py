"""`ragpulse run` as a benchmark subprocess and a paced producer (latency, memory, scaling).

`BenchSidecar` is the one sidecar wrapper (`tests.support.sidecar.SidecarProcess`) with the
benchmarks' defaults: topics named ``bench.*``, log level WARNING, a temporary log file, an
optional CPU pin (``taskset``), and `start()` returning before the child is ready.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from aiokafka import AIOKafkaProducer
from prometheus_client.parser import text_string_to_metric_families

from tests.support.sidecar import SidecarProcess, Topics

__all__ = ["BenchSidecar", "paced_produce", "scrape_counter"]


class BenchSidecar(SidecarProcess):
    """One `python -m stream.cli run` child on loopback, configured by RAGPULSE_* env."""

    def __init__(
        self, bootstrap: str, topic: str, group: str | None = None, cpu: int | None = None,
        **env: str,
    ) -> None:  # fmt: skip
        t = uuid.uuid4().hex[:8]
        topics = Topics(
            input=topic, dlq=f"bench.dlq-{t}", scores=f"bench.scores-{t}",
            group=group or f"bench-{t}", alarms=f"bench.alarms-{t}", state=f"bench.state-{t}",
        )  # fmt: skip
        pin = ("taskset", "-c", str(cpu)) if cpu is not None else ()
        super().__init__(bootstrap, topics, {"RAGPULSE_LOG_LEVEL": "WARNING", **env}, prefix=pin)
        self.cpu = cpu
        self.scores_topic = topics.scores
        self.log = Path(tempfile.mkstemp(prefix="bench-sidecar-", suffix=".log")[1])

    def start(self) -> BenchSidecar:  # type: ignore[override]
        """Start the child; `wait_ready()` waits for /readyz."""
        assert self.log is not None
        self.launch(self.log)
        return self

    def wait_ready(self, ready_timeout: float = 120.0) -> BenchSidecar:
        super().wait_ready(ready_timeout)
        return self

    def consumed(self) -> float:
        return scrape_counter(self.url + "/metrics", "ragpulse_events_total", outcome="consumed")


def scrape_counter(url: str, name: str, **labels: str) -> float:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return -1.0
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


async def paced_produce(
    bootstrap: str,
    topic: str,
    messages: Sequence[tuple[bytes | None, bytes]],
    rate: float,
    on_sent: Callable[[int, float], None] | None = None,
) -> float:
    """Send `messages` at `rate`/s (in 10 ms ticks); `on_sent(i, wall time)`; returns the
    achieved rate."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    await producer.start()
    try:
        started = time.perf_counter()
        futures = []
        for i, (key, value) in enumerate(messages):
            due = started + i / rate
            delay = due - time.perf_counter()
            if delay > 0.01:
                await asyncio.sleep(delay)
            if on_sent is not None:
                on_sent(i, time.time())
            futures.append(await producer.send(topic, value, key=key))
        await asyncio.gather(*futures)
        took = time.perf_counter() - started
    finally:
        await producer.stop()
    return len(messages) / took if took else 0.0
