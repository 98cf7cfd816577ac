"""Dead-letter records: the source record's bytes, key and headers, plus why and where.

Kafka-Connect-style error headers follow the source record's own headers (kept as they
came, null values included). A value longer than `kafka.dlq_max_value_bytes` is cut to
that length, with `ragpulse.error.value_bytes` keeping the original size: a record the
producer cannot send would stop the stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from stream.fetch_guard import SkippedBatch
from stream.pipeline import Result

__all__ = ["Headers", "dead_letter", "dlq_headers", "skipped_batch_letter"]

Headers = list[tuple[str, bytes | None]]


def dlq_headers(
    result: Result, topic: str, partition: int, offset: int, source: Iterable[Any] = ()
) -> Headers:
    """The source record's headers, then ragpulse's error and source headers."""
    pairs = source.items() if isinstance(source, Mapping) else source
    return [
        *((str(k), v) for k, v in pairs),
        ("ragpulse.error.reason", (result.reason or "").encode()),
        ("ragpulse.error.detail", (result.detail or "")[:1000].encode()),
        ("ragpulse.source.topic", topic.encode()),
        ("ragpulse.source.partition", str(partition).encode()),
        ("ragpulse.source.offset", str(offset).encode()),
        ("ragpulse.error.time", datetime.now(UTC).isoformat().encode()),
    ]


def _capped(value: bytes | None, cap: int, headers: Headers) -> bytes | None:
    if value is None or len(value) <= cap:
        return value
    headers.append(("ragpulse.error.value_bytes", str(len(value)).encode()))
    return bytes(value[:cap])


def dead_letter(
    result: Result, value: bytes | None, topic: str, partition: int, offset: int,
    source: Iterable[Any], cap: int,
) -> tuple[bytes | None, Headers]:  # fmt: skip
    """Value and headers of the dead letter of one invalid record."""
    headers = dlq_headers(result, topic, partition, offset, source)
    return _capped(value, cap, headers), headers


def skipped_batch_letter(skip: SkippedBatch, cap: int) -> tuple[bytes, Headers]:
    """One dead letter per undecodable batch: its raw bytes, first and next offsets."""
    why = f"{skip.reason}: {skip.detail}"
    result = Result("invalid", reason="undecodable_batch", detail=why)
    headers = dlq_headers(result, skip.topic, skip.partition, skip.first_offset)
    headers.append(("ragpulse.source.next_offset", str(skip.next_offset).encode()))
    return _capped(skip.raw, cap, headers) or b"", headers
