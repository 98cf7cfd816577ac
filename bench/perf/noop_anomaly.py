"""Why did stage (e), the no-op faust agent, once run with its core mostly idle?

    python -m bench.perf.noop_anomaly [--runs 3] [--small 50000] [--large 200000]

The 2026-11-21 throughput run that BENCHMARKS.md's wall ratio came from produced a
200,000-event topic; stage (e) then reached 1.1k events/s with its core ~28 % busy. Later
quiet runs on a 50,000-event topic reached ~14k/s at 100 %. This puts both topic sizes in
one embedded broker and times (e) (first 10,000 events, pinned to one CPU) on each,
alternating, plus a timed fetch of 10,000 records with a bare aiokafka consumer: if the
embedded broker's fetches get slower as its in-memory log grows, (e)'s core waits on them.
Writes bench/results/noop_anomaly.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from bench.perf.kafkabench import produce, run_stage
from bench.perf.mdsection import machine
from stream.demo import EmbeddedBroker

OUT = Path(__file__).resolve().parents[2] / "bench/results/noop_anomaly.json"


async def timed_fetch(bootstrap: str, topic: str, n: int) -> float:
    """Seconds for a bare consumer to read the first `n` records of `topic`."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        consumer.assign(parts)
        await consumer.seek_to_beginning(*parts)
        started, got = time.monotonic(), 0
        while got < n:
            batch = await consumer.getmany(timeout_ms=1000, max_records=1000)
            got += sum(len(v) for v in batch.values())
        return time.monotonic() - started
    finally:
        await consumer.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf.noop_anomaly", description=__doc__)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--small", type=int, default=50_000)
    p.add_argument("--large", type=int, default=200_000)
    p.add_argument("--events", type=int, default=10_000)
    p.add_argument("--cpu", type=int, default=1)
    args = p.parse_args(argv)
    rows: list[dict[str, Any]] = []
    with EmbeddedBroker() as broker:
        bs = broker.bootstrap_servers
        topics = {"small": ("noop.small", args.small), "large": ("noop.large", args.large)}
        for topic, n in topics.values():
            asyncio.run(produce(bs, topic, n))
        for run in range(args.runs):
            for size, (topic, n) in topics.items():
                stage = ["--stage", "faust-noop", "--bootstrap", bs, "--topic", topic]
                e = run_stage([*stage, "--n", str(args.events)], args.cpu)
                fetch = asyncio.run(timed_fetch(bs, topic, args.events))
                row = {
                    "run": run,
                    "topic": size,
                    "topic_events": n,
                    "e_events_per_s": e["events_per_s"],
                    "e_events_per_cpu_s": e["events_per_cpu_s"],
                    "e_core_busy": e["cpu_s"] / e["seconds"],
                    "bare_fetch_s": fetch,
                }
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    summary = {
        size: {
            key: statistics.median(r[key] for r in rows if r["topic"] == size)
            for key in ("e_events_per_s", "e_events_per_cpu_s", "e_core_busy", "bare_fetch_s")
        }
        for size in ("small", "large")
    }
    OUT.write_text(json.dumps({"machine": machine(), "summary": summary, "rows": rows}, indent=1))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
