"""The drift stage's internal topics: created like the input topic, checked at start.

The observations topic (key = series id, short retention) and the state changelog
(compacted) have the same partition count, by default the input topic's, so that a
series' observation partition and its state partition are the same number: the owner
of observation partition p restores exactly changelog partition p. A mismatch (for
example a changelog created by hand with one partition) fails at start and names both.
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import NewTopic

from stream.runtime import kafka_private
from stream.runtime.kafka_config import aiokafka_kwargs, ensure_topics
from stream.runtime.settings import ConfigError, KafkaSettings

__all__ = ["ensure_fleet_topics", "partition_count"]

log = logging.getLogger(__name__)

OBSERVATION_RETENTION_MS = 3_600_000  # an hour: ten times the longest lateness allowed


async def partition_count(k: KafkaSettings, topic: str, wait_s: float = 10.0) -> int:
    """Partitions of `topic` from the broker's metadata (0 when it does not exist)."""
    consumer = AIOKafkaConsumer(**aiokafka_kwargs(k), client_id=f"{k.client_id}-meta")
    await consumer.start()
    try:
        deadline = time.monotonic() + wait_s
        while True:
            await kafka_private.force_metadata_update(consumer)  # no public refresh
            parts = consumer.partitions_for_topic(topic)
            if parts or time.monotonic() >= deadline:
                return len(parts or ())
            await asyncio.sleep(0.2)
    finally:
        await consumer.stop()


async def ensure_fleet_topics(k: KafkaSettings) -> int:
    """Create (when allowed) and check the two topics; their partition count."""
    wanted = k.observation_partitions or await partition_count(k, k.input_topic)
    if wanted <= 0:
        wanted = k.topic_partitions
    if k.create_topics:
        topics = [
            NewTopic(k.observations_topic, wanted, replication_factor=1,
                     topic_configs={"retention.ms": str(OBSERVATION_RETENTION_MS)}),
            NewTopic(k.state_topic, wanted, replication_factor=1,
                     topic_configs={"cleanup.policy": "compact"}),
        ]  # fmt: skip
        await ensure_topics(k, new=topics)
    obs = await partition_count(k, k.observations_topic)
    state = await partition_count(k, k.state_topic)
    if obs == 0 or state == 0:
        missing = k.observations_topic if obs == 0 else k.state_topic
        raise ConfigError(
            f"kafka.observations_topic / kafka.state_topic: topic {missing!r} does not exist"
            " (create it, or set kafka.create_topics: true)"
        )
    if obs != state:
        raise ConfigError(
            f"kafka.state_topic: {k.state_topic!r} has {state} partitions but"
            f" kafka.observations_topic {k.observations_topic!r} has {obs}; they must match"
            " (a series' state lives on the partition number of its observations)"
        )
    log.info("drift stage: %d partitions on %s and %s", obs, k.observations_topic, k.state_topic)
    return obs
