"""Observation producer: ~`rate` records/s keyed by stream id, round robin over the 64 keys.

    python -m bench.fleet._producer BOOTSTRAP [RATE]
Runs until SIGTERM/SIGKILL. Keys are raw bytes, values JSON, partition = partition_of(key).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from aiokafka import AIOKafkaProducer

from bench.fleet.common import KEYS, OBS_TOPIC, partition_of


async def run(bootstrap: str, rate: float) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    seq = 0
    tick = 0.1
    per_tick = max(1, round(rate * tick))
    next_t = time.monotonic()
    try:
        while True:
            for _ in range(per_tick):
                key = KEYS[seq % len(KEYS)]
                value = {"key": key, "seq": seq, "ts": time.time(), "mean": 0.5, "count": 12}
                await producer.send(
                    OBS_TOPIC, json.dumps(value).encode(), key=key.encode(),
                    partition=partition_of(key),
                )  # fmt: skip
                seq += 1
            next_t += tick
            await asyncio.sleep(max(0.0, next_t - time.monotonic()))
    finally:
        await producer.stop()


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 100.0))
