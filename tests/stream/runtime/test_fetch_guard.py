"""FetchGuard on the real broker: undecodable batches are skipped, nothing else is lost."""

from __future__ import annotations

import asyncio
import json
import zlib

import aiokafka.errors as Errors
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.runtime.fetch_guard import FetchGuard, _batch_at, undecodable
from tests.conftest import produce
from tests.stream.runtime.kafka_records import produce_corrupt_batch


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


def test_batch_span_ignores_a_fragment_shorter_than_a_header() -> None:
    fragment = (7).to_bytes(8, "big") + (3).to_bytes(4, "big") + b"abc"  # no batch header
    assert _batch_at(fragment, 7) is None


class _StubConsumer:
    """Only what `_skip` touches; the bytes it judges are real aiokafka record batches."""

    def __init__(self) -> None:
        self.seeks: list[tuple[TopicPartition, int]] = []

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.seeks.append((tp, offset))


def _good_batch(base: int) -> bytes:
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(2, 0, -1, -1, -1, -1, batch_size=1 << 20)
    for i in range(3):
        b.append(i, timestamp=None, key=None, value=b"v%d" % i, headers=[])
    raw = b.build()
    raw[0:8] = base.to_bytes(8, "big")  # base offset lives outside the CRC
    return bytes(raw)


@pytest.mark.parametrize("found", ["decodes", "not_found"])
def test_skip_never_raises_when_the_bytes_are_not_to_blame(
    found: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fetch error whose batch decodes, or cannot be read whole, is not about the bytes:
    the partition waits and is retried (the process never ends over it), nothing skipped."""
    import stream.runtime.fetch_guard as fg

    monkeypatch.setattr(fg, "_RETRY_S", 0.0)
    stub = _StubConsumer()
    guard = FetchGuard(stub)  # type: ignore[arg-type]
    raw = _good_batch(40)
    assert _batch_at(raw, 41) == (40, 43, raw)

    async def raw_batch(tp: TopicPartition, offset: int) -> tuple[int, int, bytes] | None:
        return (40, 43, raw) if found == "decodes" else None

    monkeypatch.setattr(guard, "_raw_batch", raw_batch)
    tp = TopicPartition("t", 0)
    moved = asyncio.run(guard._skip(tp, 40, Errors.CorruptRecordException("crc")))
    assert moved is False and stub.seeks == [] and guard.take_skipped() == []
