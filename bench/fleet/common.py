"""Shared constants, the worker report channel, topic seeding and /proc sampling.

Report channel: each worker appends JSON lines to `<report_dir>/<worker>.jsonl`, one per
event, each with `t` (wall clock, same host as the driver) and `kind`:
  start | assigned {parts} | restored {parts, keys, missing} | first {key, part, n, had}
  | obs {key, n, had, seq} (only for the watched key) | count {processed}
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

PARTITIONS = 16
KEYS = [f"s{i:02d}" for i in range(64)]
WATCH_KEY = "s00"  # the key whose owner the failover scenario kills
STATE_BYTES = 4096
OBS_TOPIC = "fleet-obs"
K_GROUP = "fleet-k"
K_STATE_TOPIC = "fleet-k-state"
F_APP_ID = "fleetf"
F_TABLE = "drift"
F_CHANGELOG = f"{F_APP_ID}-{F_TABLE}-changelog"  # faust's naming: <app id>-<table>-changelog
SESSION_TIMEOUT_S = 6.0
HEARTBEAT_S = 1.0
REBALANCE_TIMEOUT_S = 3.0
CLK_TCK = os.sysconf("SC_CLK_TCK")


def partition_of(key: str) -> int:
    """Explicit key -> partition map (4 keys per partition), used by every producer."""
    return int(key[1:]) % PARTITIONS


def make_state(key: str, n: int) -> dict[str, Any]:
    """A ~4 KB JSON detector state; `n` counts observations applied to it."""
    return {"key": key, "n": n, "t": time.time(), "pad": "x" * (STATE_BYTES - 80)}


class Reporter:
    """Append-only JSON-lines event log for one worker (the driver tails it)."""

    def __init__(self, report_dir: str, worker: str) -> None:
        self.path = Path(report_dir) / f"{worker}.jsonl"
        self._f = self.path.open("a", buffering=1)
        self.processed = 0
        self._seen: set[str] = set()
        self.event("start", pid=os.getpid())

    def event(self, kind: str, **fields: Any) -> None:
        self._f.write(json.dumps({"t": time.time(), "kind": kind, **fields}) + "\n")

    def new_generation(self, parts: list[int]) -> None:
        self._seen.clear()
        self.event("assigned", parts=sorted(parts))

    def processed_one(self, key: str, n_before: int, had_state: bool, seq: int = -1) -> None:
        self.processed += 1
        if key not in self._seen:
            self._seen.add(key)
            self.event("first", key=key, part=partition_of(key), n=n_before, had=had_state)
        if key == WATCH_KEY:
            self.event("obs", key=key, n=n_before, had=had_state, seq=seq)

    async def count_loop(self, every_s: float = 1.0) -> None:
        while True:
            self.event("count", processed=self.processed)
            await asyncio.sleep(every_s)


def read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line being written
            break
    return out


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a process, seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def create_topics(bootstrap: str, names: list[str], compacted: set[str]) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        topics = [
            NewTopic(n, PARTITIONS, 1,
                     topic_configs={"cleanup.policy": "compact"} if n in compacted else {})
            for n in names
        ]  # fmt: skip
        await admin.create_topics(topics)
    finally:
        await admin.close()


async def seed_state(bootstrap: str, topic: str, json_keys: bool) -> None:
    """Write one ~4 KB state per key to `topic` (faust's changelog keys are JSON strings)."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for key in KEYS:
            k = json.dumps(key).encode() if json_keys else key.encode()
            value = json.dumps(make_state(key, 0)).encode()
            await producer.send(topic, value, key=k, partition=partition_of(key))
        await producer.flush()
    finally:
        await producer.stop()


async def wait_metadata(bootstrap: str, topics: list[str], timeout_s: float = 15.0) -> None:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            await consumer._client.force_metadata_update()  # aiokafka has no public refresh
            if all(len(consumer.partitions_for_topic(t) or ()) == PARTITIONS for t in topics):
                return
            await asyncio.sleep(0.2)
        raise RuntimeError(f"topics {topics} not visible with {PARTITIONS} partitions")
    finally:
        await consumer.stop()
