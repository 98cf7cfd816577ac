"""`ragpulse run` as a benchmark subprocess and a paced producer (latency, memory, scaling)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from aiokafka import AIOKafkaProducer
from prometheus_client.parser import text_string_to_metric_families

from bench.perf.mdsection import ROOT
from stream.demo import free_port

__all__ = ["BenchSidecar", "paced_produce", "scrape_counter"]


class BenchSidecar:
    """One `python -m stream.cli run` child on loopback, configured by RAGPULSE_* env."""

    def __init__(
        self, bootstrap: str, topic: str, group: str | None = None, cpu: int | None = None,
        **env: str,
    ) -> None:  # fmt: skip
        t = uuid.uuid4().hex[:8]
        self.port = free_port()
        self.scores_topic = f"bench.scores-{t}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
        self.env.update(
            {
                "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
                "RAGPULSE_KAFKA__INPUT_TOPIC": topic,
                "RAGPULSE_KAFKA__SCORES_TOPIC": self.scores_topic,
                "RAGPULSE_KAFKA__DLQ_TOPIC": f"bench.dlq-{t}",
                "RAGPULSE_KAFKA__ALARMS_TOPIC": f"bench.alarms-{t}",
                "RAGPULSE_KAFKA__STATE_TOPIC": f"bench.state-{t}",
                "RAGPULSE_KAFKA__GROUP_ID": group or f"bench-{t}",
                "RAGPULSE_SERVER__HOST": "127.0.0.1",
                "RAGPULSE_SERVER__PORT": str(self.port),
                "RAGPULSE_JUDGE__TYPE": "none",
                "RAGPULSE_LOG_LEVEL": "WARNING",
                **env,
            }
        )
        self.cpu = cpu
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkstemp(prefix="bench-sidecar-", suffix=".log")[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> BenchSidecar:
        cmd = [sys.executable, "-m", "stream.cli", "run"]
        if self.cpu is not None:
            cmd = ["taskset", "-c", str(self.cpu), *cmd]
        with self.log.open("wb") as fh:
            self.proc = subprocess.Popen(cmd, env=self.env, cwd=ROOT, stdout=fh, stderr=fh)
        return self

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/readyz", timeout=2) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"sidecar exited: {self.log.read_text()[-2000:]}")
            if self.ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"sidecar not ready: {self.log.read_text()[-2000:]}")

    def consumed(self) -> float:
        return scrape_counter(self.url + "/metrics", "ragpulse_events_total", outcome="consumed")

    def stop(self) -> int:
        if self.proc is None:
            return 0
        self.proc.terminate()
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)


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
