"""Kafka's transient errors, registered with the one retry policy (`stream.platform.retry`).

Importing this module (the engines and the Kafka helpers do) makes `classify` retry
aiokafka's connection and timeout errors, and any `KafkaError` that says it is retriable.
"""

from __future__ import annotations

from aiokafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError

from stream.platform.retry import Backoff, RetryAction, classify, register_transient

__all__ = ["Backoff", "RetryAction", "classify"]

register_transient(KafkaConnectionError, KafkaTimeoutError, when_flagged=(KafkaError,))
