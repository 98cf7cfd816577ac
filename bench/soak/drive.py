"""The soak's moving parts: the sidecar process and a fixed-rate producer."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka import AIOKafkaProducer
from prometheus_client.parser import text_string_to_metric_families

from stream.broker import free_port
from stream.traffic import generate

__all__ = ["Sidecar", "Topics", "produce_at_rate"]

ROOT = Path(__file__).resolve().parents[2]
Metrics = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@dataclass
class Topics:
    input: str
    group: str

    @classmethod
    def unique(cls) -> Topics:
        t = uuid.uuid4().hex[:8]
        return cls(f"soak-{t}", f"soak-{t}")


@dataclass
class Sidecar:
    bootstrap: str
    extra_env: dict[str, str] = field(default_factory=dict)
    topics: Topics = field(default_factory=Topics.unique)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 90.0) -> Sidecar:
        t = self.topics.input
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
        env.update(
            {
                "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": self.bootstrap,
                "RAGPULSE_KAFKA__INPUT_TOPIC": t,
                "RAGPULSE_KAFKA__DLQ_TOPIC": f"{t}.dlq",
                "RAGPULSE_KAFKA__SCORES_TOPIC": f"{t}.scores",
                "RAGPULSE_KAFKA__ALARMS_TOPIC": f"{t}.alarms",
                "RAGPULSE_KAFKA__STATE_TOPIC": f"{t}.state",
                "RAGPULSE_KAFKA__GROUP_ID": self.topics.group,
                "RAGPULSE_SERVER__HOST": "127.0.0.1",
                "RAGPULSE_SERVER__PORT": str(self.port),
                "RAGPULSE_JUDGE__TYPE": "none",
                **self.extra_env,
            }
        )
        log = Path(tempfile.gettempdir()) / f"ragpulse-soak-{self.topics.group}.log"
        with log.open("wb") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "stream.cli", "run"],
                env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
            )  # fmt: skip
        print(f"sidecar pid {self.proc.pid}, log {log}", file=sys.stderr)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sidecar exited at start: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2):
                    return self
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"sidecar not ready in {timeout}s")

    def metrics(self) -> Metrics:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as r:
            text = r.read().decode()
        out: Metrics = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    def terminate(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        self.proc.terminate()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


async def produce_at_rate(bootstrap: str, topic: str, rate: float, duration: float) -> int:
    """Send the bundled traffic (new event ids all along) at `rate` events/s; returns count."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    await producer.start()
    sent, index, tick = 0, 0, 0.1
    batch: list[tuple[bytes | None, bytes]] = []
    started = time.monotonic()
    try:
        while (now := time.monotonic() - started) < duration:
            due = int(now * rate) - sent
            while due > 0:
                if not batch:
                    items = generate(1000, seed=3, start_index=index, malformed_rate=0.002)
                    batch = [(g.key, g.raw) for g in items][::-1]
                    index += 1000
                key, raw = batch.pop()
                await producer.send(topic, raw, key=key)
                sent += 1
                due -= 1
            await asyncio.sleep(tick)
        await producer.flush()
    finally:
        await producer.stop()
    return sent
