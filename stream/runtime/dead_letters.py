"""Dead-letter records: the source record's bytes, key and headers, plus why and where.

Kafka-Connect-style error headers follow the source record's own headers (kept as they
came, null values included). A dead letter is kept within `kafka.dlq_max_value_bytes`,
key and headers included, because a record the producer cannot send would stop the
stream: the value is cut first (`ragpulse.error.value_bytes` keeps its size); a key over
1 KiB is cut (`ragpulse.error.key_bytes`) and the source headers are dropped
(`ragpulse.error.headers_dropped` counts them) only when they alone do not fit.
`kafka.dlq_max_value_bytes` is at most `kafka.max_record_bytes` (checked at start), and a
header counts its two length varints (10 bytes) as `stream.runtime.record_size` does, so
a dead letter always fits the record cap.

:func:`output_letter` is the dead letter of a record ragpulse could not publish (over the
record cap after shedding, or refused by the broker): its key, value and headers, then
`ragpulse.error.reason` (`output_too_large` / `output_rejected`), `ragpulse.error.detail`,
`ragpulse.output.topic` and `ragpulse.error.time`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from stream.runtime.fetch_guard import SkippedBatch
from stream.runtime.pipeline import Result

__all__ = ["Headers", "dead_letter", "dlq_headers", "output_letter", "skipped_batch_letter"]

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


_KEY_CAP = 1024
_OVERHEAD = 256  # headers ragpulse may still append, and record framing


_HEADER_VARINTS = 10  # the two length varints of a header (record_size.HEADER_OVERHEAD)


def _size(headers: Headers) -> int:
    return sum(_HEADER_VARINTS + len(k.encode()) + len(v or b"") for k, v in headers)


def _capped(value: bytes | None, cap: int, headers: Headers) -> bytes | None:
    if value is None or len(value) <= cap:
        return value
    headers.append(("ragpulse.error.value_bytes", str(len(value)).encode()))
    return bytes(value[: max(cap, 0)])


def _fit(
    key: bytes | None, value: bytes | None, headers: Headers, n_source: int, cap: int
) -> tuple[bytes | None, bytes | None, Headers]:
    """Key, value and headers of a dead letter within `cap` bytes in all."""
    if len(key or b"") + _size(headers) + _OVERHEAD > cap:
        if key is not None and len(key) > _KEY_CAP:
            headers.append(("ragpulse.error.key_bytes", str(len(key)).encode()))
            key = bytes(key[:_KEY_CAP])
        if len(key or b"") + _size(headers) + _OVERHEAD > cap and n_source:
            headers = headers[n_source:]
            headers.append(("ragpulse.error.headers_dropped", str(n_source).encode()))
    room = cap - len(key or b"") - _size(headers) - _OVERHEAD
    return key, _capped(value, room, headers), headers


def dead_letter(
    result: Result, key: bytes | None, value: bytes | None, topic: str, partition: int,
    offset: int, source: Iterable[Any], cap: int,
) -> tuple[bytes | None, bytes | None, Headers]:  # fmt: skip
    """Key, value and headers of the dead letter of one invalid record."""
    pairs = list(source.items() if isinstance(source, Mapping) else source)
    headers = dlq_headers(result, topic, partition, offset, pairs)
    return _fit(key, value, headers, len(pairs), cap)


def skipped_batch_letter(skip: SkippedBatch, cap: int) -> tuple[bytes, Headers]:
    """One dead letter per undecodable batch: its raw bytes, first and next offsets."""
    why = f"{skip.reason}: {skip.detail}"
    result = Result("invalid", reason="undecodable_batch", detail=why)
    headers = dlq_headers(result, skip.topic, skip.partition, skip.first_offset)
    headers.append(("ragpulse.source.next_offset", str(skip.next_offset).encode()))
    return _capped(skip.raw, cap - _size(headers) - _OVERHEAD, headers) or b"", headers


def output_letter(
    reason: str, detail: str, topic: str, key: bytes | None, value: bytes | None,
    headers: Headers, cap: int,
) -> tuple[bytes | None, bytes | None, Headers]:  # fmt: skip
    """The dead letter of a record ragpulse could not publish on `topic`."""
    letter = [
        *headers,
        ("ragpulse.error.reason", reason.encode()),
        ("ragpulse.error.detail", detail[:1000].encode()),
        ("ragpulse.output.topic", topic.encode()),
        ("ragpulse.error.time", datetime.now(UTC).isoformat().encode()),
    ]
    return _fit(key, value, letter, len(headers), cap)
