"""Kafka helpers shared by the tests and the benchmarks (``bench.perf.kafkabench``)."""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

__all__ = ["create_topic"]


async def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, replication_factor=1)])
    finally:
        await admin.close()
