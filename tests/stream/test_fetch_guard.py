"""FetchGuard on the real broker: undecodable batches are skipped, nothing else is lost."""

from __future__ import annotations

import asyncio
import json
import zlib

import aiokafka.errors as Errors
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.fetch_guard import FetchGuard, _batch_at, undecodable
from tests.conftest import produce
from tests.stream.kafka_records import produce_corrupt_batch


def test_undecodable_is_about_bytes_not_the_protocol() -> None:
    assert undecodable(Errors.CorruptRecordException("crc"))
    assert undecodable(Errors.UnsupportedCodecError("zstd"))
    assert undecodable(zlib.error("bad"))
    assert undecodable(OSError("Not a gzipped file"))
    assert not undecodable(Errors.KafkaConnectionError("down"))
    assert not undecodable(Errors.TopicAuthorizationFailedError("acl"))
    assert not undecodable(KeyboardInterrupt())


def test_batch_span_from_headers_only() -> None:
    def v2(base: int, last_delta: int, body: bytes = b"x" * 40) -> bytes:
        rest = bytes(4) + b"\x02" + bytes(6) + last_delta.to_bytes(4, "big") + body
        return base.to_bytes(8, "big") + len(rest).to_bytes(4, "big") + rest

    raw = v2(10, 2) + v2(13, 4) + v2(18, 0)[:-5]  # the last one cut short
    assert _batch_at(raw, 10)[:2] == (10, 13)  # type: ignore[index]
    assert _batch_at(raw, 15)[:2] == (13, 18)  # type: ignore[index]
    assert _batch_at(raw, 18) is None


@pytest.mark.broker
def test_good_records_around_bad_batches_all_arrive_once(broker) -> None:  # type: ignore[no-untyped-def]
    """aiokafka alone: stalls at the first bad batch for good, and drops the records it had
    already unpacked from the same fetch. With the guard: every good record once, in order,
    and each bad batch reported with its exact offsets."""
    bs, topic = broker.bootstrap_servers, "guard-" + json.dumps(id(object()))[-6:]
    good = lambda tag, n: [(b"k", json.dumps({"id": f"{tag}{i}"}).encode()) for i in range(n)]  # noqa: E731
    produce(bs, topic, good("a", 3))
    crc = produce_corrupt_batch(bs, topic, 0, ["x1", "x2"], "crc")
    produce(bs, topic, good("b", 2))
    codec = produce_corrupt_batch(bs, topic, 0, ["y1", "y2", "y3"], "codec")
    produce(bs, topic, good("c", 2))

    async def read(guarded: bool) -> tuple[list[int], list[tuple[int, int]], str]:
        c = AIOKafkaConsumer(bootstrap_servers=bs, group_id=f"g-{guarded}-{topic}",
                             enable_auto_commit=False)  # fmt: skip
        await c.start()
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        await c.seek_to_beginning(tp)
        guard, offsets, error = FetchGuard(c), [], ""
        try:
            for _ in range(6):
                try:
                    if guarded:
                        batch = await guard.getmany(timeout_ms=500, max_records=100)
                    else:
                        batch = await c.getmany(timeout_ms=500, max_records=100)
                except Errors.CorruptRecordException as exc:
                    error = type(exc).__name__
                    continue
                offsets += [r.offset for recs in batch.values() for r in recs]
        finally:
            await c.stop()
        spans = [(s.first_offset, s.next_offset) for s in guard.take_skipped()]
        return offsets, spans, error

    offsets, spans, error = asyncio.run(read(guarded=False))
    assert offsets == [] and error == "CorruptRecordException"  # the stall this guards against
    offsets, spans, _ = asyncio.run(read(guarded=True))
    assert offsets == [0, 1, 2, 5, 6, 10, 11]
    assert spans == [crc, codec] == [(3, 5), (7, 10)]
