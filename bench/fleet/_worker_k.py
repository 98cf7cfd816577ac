"""Mechanism K: a plain aiokafka consumer group on the observation topic.

    python -m bench.fleet._worker_k BOOTSTRAP REPORT_DIR WORKER_ID

On assignment it restores the newly assigned partitions' states from the compacted
changelog (assign + seek_to_beginning + read to the end offsets); partitions it already
owned keep their in-memory state (aiokafka's eager protocol revokes everything first,
but nobody else can have owned them in between). Every observation updates its key's
state and produces the snapshot to the changelog partition of the same number.
A partition's records are processed only once its restore has finished (`ready`).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition

from bench.fleet.common import (
    HEARTBEAT_S,
    K_GROUP,
    K_STATE_TOPIC,
    OBS_TOPIC,
    REBALANCE_TIMEOUT_S,
    SESSION_TIMEOUT_S,
    Reporter,
    make_state,
    partition_of,
)  # fmt: skip

RESTORE_STALL_S = 5.0  # give up reading a partition that returns nothing below its end offset


class Owner(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, bootstrap: str, rep: Reporter) -> None:
        self.bootstrap = bootstrap
        self.rep = rep
        self.owned: set[int] = set()
        self.ready: set[int] = set()  # restored partitions: only these are processed
        self.states: dict[str, dict[str, Any]] = {}
        self.consumer: AIOKafkaConsumer | None = None
        self.producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
        self.restorer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.ready.clear()
        await self.producer.flush()  # the snapshots of what we processed reach the changelog
        if self.consumer is not None and revoked:
            try:
                await self.consumer.commit()
            except Exception as exc:
                self.rep.event("commit_failed", error=repr(exc))

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        parts = {tp.partition for tp in assigned if tp.topic == OBS_TOPIC}
        # aiokafka's fetcher starts on the new assignment before this callback returns:
        # without the fence, getmany() hands out records of a partition not yet restored
        self.ready.clear()
        if self.consumer is not None:
            self.consumer.pause(*[tp for tp in assigned if tp.topic == OBS_TOPIC])
        self.rep.new_generation(sorted(parts))
        self.states = {k: v for k, v in self.states.items() if partition_of(k) in parts}
        new = parts - self.owned
        self.owned = parts
        t0 = time.monotonic()
        restored, stalled = await self.restore(new)
        self.rep.event(
            "restored", parts=sorted(new), keys=len(self.states), read=restored,
            stalled=stalled, took=time.monotonic() - t0,
        )  # fmt: skip
        self.ready = set(parts)
        if self.consumer is not None:
            self.consumer.resume(*[tp for tp in assigned if tp.topic == OBS_TOPIC])

    async def restore(self, parts: set[int]) -> tuple[int, list[int]]:
        if not parts:
            return 0, []
        tps = [TopicPartition(K_STATE_TOPIC, p) for p in sorted(parts)]
        self.restorer.assign(tps)
        await self.restorer.seek_to_beginning(*tps)
        end = await self.restorer.end_offsets(tps)
        read = 0
        last_progress = time.monotonic()
        while True:
            todo = [tp for tp in tps if await self.restorer.position(tp) < end[tp]]
            if not todo:
                return read, []
            if time.monotonic() - last_progress > RESTORE_STALL_S:
                return read, [tp.partition for tp in todo]
            batches = await self.restorer.getmany(*todo, timeout_ms=200)
            for records in batches.values():
                for rec in records:
                    if rec.key is not None and rec.value is not None:
                        self.states[rec.key.decode()] = json.loads(rec.value)
                        read += 1
                last_progress = time.monotonic()


async def run(bootstrap: str, report_dir: str, worker: str) -> None:
    rep = Reporter(report_dir, worker)
    owner = Owner(bootstrap, rep)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=K_GROUP, client_id=worker,
        auto_offset_reset="latest", enable_auto_commit=True, auto_commit_interval_ms=1000,
        session_timeout_ms=int(SESSION_TIMEOUT_S * 1000),
        heartbeat_interval_ms=int(HEARTBEAT_S * 1000),
        rebalance_timeout_ms=int(REBALANCE_TIMEOUT_S * 1000),
    )  # fmt: skip
    owner.consumer = consumer
    await owner.producer.start()
    await owner.restorer.start()
    consumer.subscribe([OBS_TOPIC], listener=owner)
    await consumer.start()
    counter = asyncio.create_task(rep.count_loop())
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=100, max_records=500)
            for tp, records in batches.items():
                if tp.partition not in owner.ready:  # fetched before the fence: read again later
                    consumer.seek(tp, records[0].offset)
                    continue
                for rec in records:
                    key = rec.key.decode()
                    old = owner.states.get(key)
                    n = int(old["n"]) if old else 0
                    state = make_state(key, n + 1)
                    owner.states[key] = state
                    await owner.producer.send(
                        K_STATE_TOPIC, json.dumps(state).encode(), key=rec.key,
                        partition=tp.partition,
                    )  # fmt: skip
                    rep.processed_one(key, n, old is not None, json.loads(rec.value)["seq"])
    finally:
        counter.cancel()
        await consumer.stop()
        await owner.restorer.stop()
        await owner.producer.stop()


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2], sys.argv[3]))
