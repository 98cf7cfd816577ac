"""Mechanism F: a faust-streaming agent on the observation topic plus a faust.Table.

    python -m bench.fleet._worker_f BOOTSTRAP REPORT_DIR WORKER_ID [STANDBY_REPLICAS]

faust owns group membership, changelog recovery (its Recovery service) and the changelog
writes (each `table[key] = state` is produced to the changelog partition of the event).
The table is seeded by the driver with JSON keys, as faust's default serializer writes.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import faust
from faust.types import TP

from bench.fleet.common import (
    F_APP_ID,
    F_TABLE,
    HEARTBEAT_S,
    OBS_TOPIC,
    PARTITIONS,
    REBALANCE_TIMEOUT_S,
    SESSION_TIMEOUT_S,
    Reporter,
    make_state,
    partition_of,
)  # fmt: skip


def build(bootstrap: str, rep: Reporter, standby: int) -> faust.App:
    app = faust.App(
        F_APP_ID,
        broker=f"kafka://{bootstrap}",
        store="memory://",
        topic_partitions=PARTITIONS,
        broker_session_timeout=SESSION_TIMEOUT_S,
        broker_heartbeat_interval=HEARTBEAT_S,
        broker_rebalance_timeout=REBALANCE_TIMEOUT_S,
        consumer_auto_offset_reset="latest",
        table_standby_replicas=standby,
        web_enabled=False,
    )
    owned: set[int] = set()

    class ReportingTable(faust.Table):  # type: ignore[misc]
        async def on_recovery_completed(self, active_tps: set[TP], standby_tps: set[TP]) -> None:
            await super().on_recovery_completed(active_tps, standby_tps)
            keys = sum(1 for k in list(self.data.keys()) if partition_of(str(k)) in owned)
            rep.event(
                "restored", parts=sorted(tp.partition for tp in active_tps), keys=keys,
                standby=len(standby_tps), total=len(self.data),
            )  # fmt: skip

    table = app.tables.add(
        ReportingTable(app, name=F_TABLE, partitions=PARTITIONS, beacon=app.tables.beacon)
    )
    topic = app.topic(
        OBS_TOPIC, key_serializer="raw", value_serializer="json", partitions=PARTITIONS
    )

    @app.on_partitions_assigned.connect  # type: ignore[misc]
    async def _assigned(sender: Any, assigned: set[TP], **kwargs: Any) -> None:
        owned.clear()
        owned.update(tp.partition for tp in assigned if tp.topic == OBS_TOPIC)
        rep.new_generation(sorted(owned))

    @app.agent(topic)  # type: ignore[misc]
    async def process(stream: Any) -> None:
        async for event in stream.events():
            key = bytes(event.key).decode()
            old = table.get(key)
            n = int(old["n"]) if old else 0
            table[key] = make_state(key, n + 1)
            rep.processed_one(key, n, old is not None, int(event.value["seq"]))

    @app.timer(1.0)  # type: ignore[misc]
    async def _count() -> None:
        rep.event("count", processed=rep.processed)

    return app


def main(argv: list[str]) -> None:
    bootstrap, report_dir, worker = argv[:3]
    standby = int(argv[3]) if len(argv) > 3 else 1
    rep = Reporter(report_dir, worker)
    app = build(bootstrap, rep, standby)
    app.conf.datadir = os.path.join(report_dir, f"{worker}-data")
    worker_ = faust.Worker(app, loglevel=logging.WARNING, quiet=True)
    worker_.execute_from_commandline()


if __name__ == "__main__":
    main(sys.argv[1:])
