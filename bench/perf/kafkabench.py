"""Shared pieces of the Kafka benchmarks: the dataset, producing it, child stages, results.

Every Kafka benchmark runs on the real embedded broker (`stream.demo.EmbeddedBroker`)
on loopback with events from the bundled generator (`stream.demo.traffic`, seed 7, 1 %
malformed): a pool of distinct generated events is repeated with a unique event id per
copy (`evt-...` + `.c<copy>`), so dedupe never drops a copy and the detectors see the
generator's size distribution (3-8 chunks of 500-1,499 characters, ~7 KB per event).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer

from bench.perf.mdsection import ROOT, machine
from stream.demo import generate
from tests.support.kafka import create_topic

__all__ = [
    "PERF_JSON",
    "create_topic",
    "dataset",
    "load_perf",
    "produce",
    "rss_mb",
    "run_stage",
    "save_perf",
]

PERF_JSON = ROOT / "bench" / "results" / "perf.json"
POOL = 4096


def dataset(n: int, pool: int = POOL, seed: int = 7) -> Iterator[tuple[bytes | None, bytes]]:
    """`n` (key, value) messages: the generator's first `pool` events, repeated with unique ids."""
    items = [(g.key, g.raw, g.event_id) for g in generate(min(n, pool), seed=seed)]
    for i in range(n):
        key, raw, eid = items[i % len(items)]
        copy = i // len(items)
        if copy and eid is not None:
            raw = raw.replace(eid.encode(), f"{eid}.c{copy}".encode(), 1)
        yield key, raw


def stats_of_pool(pool: int = 2000) -> dict[str, Any]:
    """Size facts of the generated events (for the report)."""
    sizes: list[int] = []
    chunks: list[int] = []
    chars: list[int] = []
    for g in generate(pool, seed=7, malformed_rate=0.0):
        ev = json.loads(g.raw)
        sizes.append(len(g.raw))
        chunks.append(len(ev["retrieved_context"]))
        chars.extend(len(c["content"]) for c in ev["retrieved_context"])
    sizes.sort()
    return {
        "event_bytes_median": sizes[len(sizes) // 2],
        "event_bytes_mean": round(sum(sizes) / len(sizes)),
        "chunks": [min(chunks), max(chunks)],
        "chunk_chars": [min(chars), max(chars)],
    }


async def produce(bootstrap: str, topic: str, n: int, partitions: int = 4) -> float:
    """Produce the dataset to `topic` (created with `partitions`); returns seconds taken."""
    await create_topic(bootstrap, topic, partitions)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=5, max_batch_size=512 * 1024
    )
    await producer.start()
    started = time.perf_counter()
    try:
        futures = []
        for key, value in dataset(n):
            futures.append(await producer.send(topic, value, key=key))
            if len(futures) >= 2000:
                await asyncio.gather(*futures)
                futures.clear()
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return time.perf_counter() - started


def run_stage(
    args: list[str], cpu: int | None, timeout: float = 900.0, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run `python -m bench.perf.stages ARGS` (pinned to `cpu`); return its JSON line.
    The stage gets none of this process's ``RAGPULSE_*`` settings, only those in `env`."""
    cmd = [sys.executable, "-m", "bench.perf.stages", *args]
    if cpu is not None:
        cmd[3:3] = []  # pinning is done by the child itself (--cpu)
        cmd += ["--cpu", str(cpu)]
    child = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    out = subprocess.run(
        cmd,
        cwd=ROOT,
        env={**child, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"stage {args[:2]} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return result


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """utime + stime of `pid` in seconds (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_perf() -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(PERF_JSON.read_text())
        return data
    except (OSError, ValueError):
        return {}


def save_perf(section: str, result: dict[str, Any]) -> Path:
    """Replace one section of bench/results/perf.json (the other sections are kept)."""
    data = load_perf()
    data[section] = {"machine": machine(), **result}
    PERF_JSON.parent.mkdir(parents=True, exist_ok=True)
    PERF_JSON.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return PERF_JSON
