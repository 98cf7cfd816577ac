"""A consumer group of real `ragpulse run` processes on the embedded broker, fed the demo's
traffic (healthy, then the degraded prompt version) at a steady rate, with the alarms
topic read as it goes. Used by tests/stream/runtime/test_fleet_kafka.py and by
`python -m bench.perf.fleet_delays`."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.demo.traffic import generate
from tests.support.sidecar import SidecarProcess, Topics

__all__ = ["FLEET_ENV", "RATE_METRICS", "Fleet"]

RATE_METRICS = ["refusal", "training_cutoff_excuse", "invented_identifier", "false_rejection"]
FLEET_ENV = {
    "RAGPULSE_KAFKA__TOPIC_PARTITIONS": "16",
    "RAGPULSE_KAFKA__SESSION_TIMEOUT_S": "6",
    "RAGPULSE_KAFKA__REBALANCE_TIMEOUT_S": "3",
    "RAGPULSE_KAFKA__HEARTBEAT_INTERVAL_S": "1",
    "RAGPULSE_DRIFT__RATE_METRICS": json.dumps(RATE_METRICS),
    "RAGPULSE_DRIFT__RATE_DETECTORS": json.dumps(
        [{"type": "proportion", "reference_size": 1000, "window_size": 300, "cooldown": 300}]
    ),
    "RAGPULSE_DRIFT__MIN_HOLD_S": "3600",
    "RAGPULSE_DRIFT__SNAPSHOT_EVERY_S": "2",
    "RAGPULSE_HEAP__TRIM_EVERY_S": "0",
}


@dataclass
class Fleet:
    bootstrap: str
    topics: Topics
    replicas: int
    tmp: Path
    env: dict[str, str] = field(default_factory=dict)
    procs: list[SidecarProcess] = field(default_factory=list)
    switch_at: float | None = None
    alarms: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> Fleet:
        env = {**FLEET_ENV, **self.env}
        self.procs = [
            SidecarProcess(self.bootstrap, self.topics, env) for _ in range(self.replicas)
        ]
        with ThreadPoolExecutor(self.replicas) as pool:
            list(pool.map(lambda sp: sp[1].start(self.tmp / f"fleet-{sp[0]}.log", 120),
                          enumerate(self.procs)))  # fmt: skip
        self.wait_owned()
        reader = threading.Thread(target=lambda: asyncio.run(self._read_alarms()), daemon=True)
        reader.start()
        self._threads.append(reader)
        return self

    def owned(self) -> list[float]:
        out = []
        for sc in self.procs:
            if sc.proc is not None and sc.proc.poll() is None:
                m = sc.metrics()
                out.append(m.get(("ragpulse_drift_owned_partitions", ()), 0.0))
        return out

    def wait_owned(self, timeout: float = 90.0) -> None:
        """Until every observation partition has one owner, twice in a row 2 s apart."""
        deadline, stable = time.monotonic() + timeout, 0
        while time.monotonic() < deadline:
            stable = stable + 1 if sum(self.owned()) == 16 else 0
            if stable >= 2:
                return
            time.sleep(2)
        raise AssertionError(f"drift partitions never settled: {self.owned()}")

    def produce(self, healthy_s: float, degraded_s: float, rate: float = 100.0,
                until: Callable[[], bool] | None = None) -> None:  # fmt: skip
        """The demo traffic: `healthy_s` of the baseline phase, then the degraded one."""

        async def go() -> None:
            producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=5)
            await producer.start()
            started, sent, phase, index = time.monotonic(), 0, "baseline", 0
            try:
                while time.monotonic() - started < healthy_s + degraded_s:
                    if phase == "baseline" and time.monotonic() - started >= healthy_s:
                        phase, self.switch_at = "degraded", time.time()
                    if until is not None and phase == "degraded" and until():
                        return
                    for item in generate(50, seed=11, phase=phase, start_index=index):  # type: ignore[arg-type]
                        await producer.send(self.topics.input, item.raw, key=item.key)
                        sent += 1
                        delay = started + sent / rate - time.monotonic()
                        if delay > 0:
                            await asyncio.sleep(delay)
                    index += 50
            finally:
                await producer.stop()

        asyncio.run(go())

    async def _read_alarms(self) -> None:
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tps: list[TopicPartition] = []
            while not tps and not self._stop.is_set():
                await consumer._client.force_metadata_update()
                parts = consumer.partitions_for_topic(self.topics.alarms) or set()
                tps = [TopicPartition(self.topics.alarms, p) for p in sorted(parts)]
                await asyncio.sleep(0.2)
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            while not self._stop.is_set():
                batch = await consumer.getmany(timeout_ms=300)
                for records in batch.values():
                    for rec in records:
                        self.alarms.append((rec.timestamp / 1000, json.loads(rec.value)))
        finally:
            await consumer.stop()

    def raised(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for _, a in list(self.alarms):
            if a["state"] == "raised":
                out.setdefault(a["metric"], []).append(a)
        return out

    def first_raise_delays(self) -> dict[str, float]:
        """Seconds from the switch to each metric's first raise on the alarms topic."""
        assert self.switch_at is not None
        out: dict[str, float] = {}
        for ts, a in list(self.alarms):
            if a["state"] == "raised" and a["metric"] not in out:
                out[a["metric"]] = round(ts - self.switch_at, 1)
        return out

    def close(self) -> None:
        self._stop.set()
        for sc in self.procs:
            sc.kill()
        for t in self._threads:
            t.join(5)
