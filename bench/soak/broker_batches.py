"""What the embedded broker costs as its log grows: per held record batch, not per byte.

    python -m bench.soak.broker_batches [--steps 5000,30000,60000,90000] [--consumers 2]

Starts an embedded broker (Tansu, memory storage) with a 4-partition topic and writes
one-record batches up to each step's count (2 KB values, as the soak's events). At each
step, `--consumers` consumers read the topic's end (caught up, long-polling with
``fetch_max_wait_ms`` 1000, as the sidecar) while 20 events/s trickle in for
`--seconds`; the broker's CPU over that window (from /proc) is the cost of serving
caught-up consumers with that many batches held. Then, on a fresh broker, the same count
of records in batches of ~7 (``linger_ms`` 5 and aiokafka's 16 KiB batch limit, sent in
bursts of thousands) for comparison.
Writes bench/results/broker_batches.json.

Why: the 2-hour soak of session 8 slowed to 55-145 events/s after ~30 minutes with the
broker at 1.45 cores. This isolates the broker's cost from ragpulse's: no sidecar runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.perf.kafkabench import cpu_s as _cpu_s
from stream.demo import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[2]
TOPIC, PARTITIONS, VALUE = "t", 4, b"x" * 2000


async def _tail(bootstrap: str, group: str, stop: asyncio.Event) -> None:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group,
                                auto_offset_reset="latest", fetch_max_wait_ms=1000)  # fmt: skip
    await consumer.start()
    try:
        while not stop.is_set():
            await consumer.getmany(timeout_ms=1000)
    finally:
        await consumer.stop()


async def _fill(broker: EmbeddedBroker, steps: list[int], args: argparse.Namespace,
                batched: bool) -> list[dict[str, Any]]:  # fmt: skip
    from aiokafka import AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    bootstrap = broker.bootstrap_servers
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5 if batched else 0)
    await producer.start()
    rows, sent = [], 0
    assert broker.pid is not None
    try:
        for target in steps:
            if batched:
                futures = [await producer.send(TOPIC, VALUE, partition=i % PARTITIONS)
                           for i in range(sent, target)]  # fmt: skip
                await asyncio.gather(*futures)
                sent = target
            while sent < target:  # one record per produce request: one batch each
                await (await producer.send(TOPIC, VALUE, partition=sent % PARTITIONS))
                sent += 1
            stop = asyncio.Event()
            tails = [asyncio.create_task(_tail(bootstrap, f"tail{target}-{i}", stop))
                     for i in range(args.consumers)]  # fmt: skip
            await asyncio.sleep(5)  # joined and caught up
            cpu0, t0 = _cpu_s(broker.pid), time.monotonic()
            for i in range(int(args.seconds * 20)):
                await producer.send(TOPIC, VALUE, partition=i % PARTITIONS)
                await asyncio.sleep(0.05)
            cores = (_cpu_s(broker.pid) - cpu0) / (time.monotonic() - t0)
            stop.set()
            await asyncio.gather(*tails)
            rows.append({"records": sent, "batched": batched, "broker_cores": round(cores, 3)})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        await producer.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak.broker_batches", description=__doc__)
    p.add_argument("--steps", default="5000,30000,60000,90000")
    p.add_argument("--consumers", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10.0, help="trickle window per step")
    p.add_argument("--json", default=str(ROOT / "bench/results/broker_batches.json"))
    args = p.parse_args(argv)
    steps = [int(s) for s in args.steps.split(",")]
    rows: list[dict[str, Any]] = []
    for batched in (False, True):
        with EmbeddedBroker() as broker:
            rows += asyncio.run(_fill(broker, steps, args, batched))
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "consumers": args.consumers, "trickle_eps": 20, "rows": rows}  # fmt: skip
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
