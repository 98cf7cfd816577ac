"""The soak's control: a bare aiokafka consumer beside the sidecar, to tell the broker's
share of consumer lag from ragpulse's.

    python -m bench.soak.control BOOTSTRAP TOPIC GROUP FETCH_MAX_WAIT_MS OUT

Consumes the sidecar's input topic in its own group with the sidecar's fetch settings and
does nothing with the records. Every second it overwrites OUT with its lag (highwater -
position, summed over partitions) and its count. A lag this consumer shares with the
sidecar comes from the broker; the rest is ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path


async def run(bootstrap: str, topic: str, group: str, wait_ms: int, out: Path) -> None:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=wait_ms,
    )
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await consumer.start()
    consumed, last = 0, 0.0
    try:
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=1000)
            consumed += sum(len(v) for v in batch.values())
            if time.monotonic() - last >= 1.0:
                last = time.monotonic()
                lag = 0
                for tp in consumer.assignment():
                    high = consumer.highwater(tp)
                    if high is not None:
                        lag += max(0, high - await consumer.position(tp))
                tmp = out.with_suffix(".tmp")
                tmp.write_text(json.dumps({"lag": lag, "consumed": consumed}))
                os.replace(tmp, out)
    finally:
        await consumer.stop()


def main() -> int:
    bootstrap, topic, group, wait_ms, out = sys.argv[1:6]
    asyncio.run(run(bootstrap, topic, group, int(wait_ms), Path(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
