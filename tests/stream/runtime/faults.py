"""Helpers shared by the fault-injection tests (crash, broker outage, hygiene).

`engine_env()` lets the whole suite run against another consumer engine without editing
the tests: `RAGPULSE_TEST_ENGINE=aiokafka pytest tests/stream/runtime/test_faults_*.py` adds
`RAGPULSE_ENGINE=aiokafka` to every sidecar process these tests start. Unset, the
sidecar's default engine is tested.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.demo import generate
from tests.conftest import partitions_of

__all__ = ["committed_total", "engine_env", "get", "score_ids", "valid_messages", "wait_for"]


def engine_env() -> dict[str, str]:
    engine = os.environ.get("RAGPULSE_TEST_ENGINE")
    return {"RAGPULSE_ENGINE": engine} if engine else {}


def valid_messages(n: int, seed: int = 11) -> list[tuple[bytes | None, bytes]]:
    items = [g for g in generate(n, seed=seed, malformed_rate=0.0) if g.malformed is None]
    return [(g.key, g.raw) for g in items]


def event_ids(messages: list[tuple[bytes | None, bytes]]) -> set[str]:
    return {json.loads(raw)["event_id"] for _, raw in messages}


def score_ids(records: list[Any]) -> Counter[str]:
    """event_id -> how many scorecards (detector scorecards only, not judge updates)."""
    return Counter(json.loads(r.value)["event_id"] for r in records)


def committed_total(bootstrap: str, group: str, topic: str) -> int:
    """Sum of the group's committed offsets on `topic` (0 when nothing is committed)."""

    async def go() -> int:
        # OffsetFetch through a consumer of the group that never joins it (the admin
        # client's ListConsumerGroupOffsets does not decode against the embedded broker)
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
        )
        await consumer.start()
        try:
            parts = await partitions_of(consumer, topic)
            assert parts, f"no partitions for {topic}"
            total = 0
            for p in parts:
                total += max(await consumer.committed(TopicPartition(topic, p)) or 0, 0)
            return total
        finally:
            await consumer.stop()

    return asyncio.run(go())


def get(url: str, timeout: float = 3.0) -> tuple[int, bytes]:
    """GET returning (status, body); (0, b"") when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, b""


def wait_for(predicate, timeout: float, every: float = 0.2) -> float | None:  # type: ignore[no-untyped-def]
    """Seconds until `predicate()` held, or None after `timeout`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(every)
    return None
