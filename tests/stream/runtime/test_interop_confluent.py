"""A third-party producer against the real sidecar: confluent-kafka (librdkafka).

Every test so far produced with aiokafka, the library that consumes. Here librdkafka
produces with idempotence on, transactions, every codec, with and without keys, with
headers (null values included), with linger batching, to 4 partitions; and records a
well-behaved producer never writes (tombstones, empty and oversized values, batches
that do not decode) sit between them. Each row of docs/reliability.md's record table
is checked on both engines against `ragpulse run` processes.

The embedded broker reports a high watermark below the real log end when records
arrive in multi-record batches (docs/reliability.md), so these tests assert on event
ids and delivered offsets, never on the broker's end offsets.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CTopicPartition

from tests.conftest import SidecarProcess, Topics, consume_all, sample
from tests.stream.runtime.kafka_records import produce_corrupt_batch

pytestmark = pytest.mark.broker

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PARTITIONS = 4
MAX_EVENT_BYTES = 20_000


def _event(event_id: str) -> bytes:
    return json.dumps(
        {
            "event_id": event_id,
            "query": "How do I reset my password?",
            "response": "Open Settings, then Security, and choose Reset password.",
        }
    ).encode()


class Delivered:
    """Delivery reports of a confluent-kafka producer: where each record landed."""

    def __init__(self) -> None:
        self.offsets: list[tuple[int, int]] = []
        self.errors: list[str] = []

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.offsets.append((msg.partition(), msg.offset()))


def _producer(bootstrap: str, **conf: Any) -> Producer:
    return Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20, **conf}
    )


def _ends(delivered: list[tuple[int, int]]) -> dict[int, int]:
    """Next offset after the last record delivered, per partition."""
    ends: dict[int, int] = {}
    for partition, offset in delivered:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    return ends


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets as any Kafka tool reads them (librdkafka OffsetFetch)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        tps = [CTopicPartition(topic, p) for p in range(PARTITIONS)]
        return {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=10)}
    finally:
        consumer.close()


def _wait(sc: SidecarProcess, n: int, timeout: float = 90.0) -> dict:  # type: ignore[type-arg]
    sc.wait_consumed(n, timeout)
    time.sleep(1.0)  # anything beyond n shows up too
    return sc.metrics()


@pytest.mark.parametrize("engine", ["aiokafka", "faust"])
def test_every_record_kind_and_codec_from_librdkafka(
    sidecar_factory, broker, tmp_path: Path, engine: str
) -> None:  # type: ignore[no-untyped-def]
    topics = Topics.unique()
    sc = sidecar_factory(
        topics, RAGPULSE_ENGINE=engine, RAGPULSE_LIMITS__MAX_EVENT_BYTES=str(MAX_EVENT_BYTES)
    ).start(tmp_path)
    bs = broker.bootstrap_servers
    delivered, valid = Delivered(), []
    for codec in CODECS:  # idempotent, lingering, compressed; keys and headers vary
        p = _producer(bs, **{"compression.type": codec})
        for i in range(40):
            event_id = f"{codec}-{i}-{uuid.uuid4().hex[:6]}"
            key = f"conv-{i % 7}".encode() if i % 2 else None
            headers = [("trace", b"t-%d" % i), ("empty", None)] if i % 3 == 0 else None
            p.produce(
                topics.input, _event(event_id), key=key, headers=headers, on_delivery=delivered
            )
            valid.append(event_id)
        assert p.flush(20) == 0
    bad = Delivered()
    p = _producer(bs)
    p.produce(topics.input, None, key=b"tombstone", partition=0, on_delivery=bad)
    p.produce(topics.input, b"", key=b"empty", partition=1, on_delivery=bad)
    big = _event("too-big-" + "x" * MAX_EVENT_BYTES)
    p.produce(topics.input, big, key=b"big", headers=[("h", None)], partition=2, on_delivery=bad)
    assert p.flush(20) == 0
    spans = [
        produce_corrupt_batch(bs, topics.input, 3, [f"crc-{i}" for i in range(3)], "crc"),
        produce_corrupt_batch(bs, topics.input, 3, [f"gz-{i}" for i in range(4)], "codec"),
    ]
    after = Delivered()
    p = _producer(bs, **{"compression.type": "zstd"})
    for i in range(12):  # the stream goes on past every bad record, on every partition
        event_id = f"after-{i}-{uuid.uuid4().hex[:6]}"
        p.produce(topics.input, _event(event_id), partition=i % PARTITIONS, on_delivery=after)
        valid.append(event_id)
    assert p.flush(20) == 0
    assert not (delivered.errors or bad.errors or after.errors)

    skipped = sum(b - a for a, b in spans)
    total = len(valid) + 3 + skipped
    m = _wait(sc, total)
    assert sc.proc is not None and sc.proc.poll() is None, sc.output()[-3000:]
    assert sample(m, "ragpulse_events_total", outcome="consumed") == total
    assert sample(m, "ragpulse_events_total", outcome="scored") == len(valid)
    invalid = {
        r: sample(m, "ragpulse_invalid_events_total", reason=r)
        for r in ("null_value", "empty_value", "oversized", "undecodable_batch")
    }
    assert invalid == {
        "null_value": 1,
        "empty_value": 1,
        "oversized": 1,
        "undecodable_batch": skipped,
    }
    assert sample(m, "ragpulse_events_total", outcome="dead_lettered") == 5
    assert sample(m, "ragpulse_ready") == 1

    scores = consume_all(bs, topics.scores, len(valid))
    ids = Counter(json.loads(r.value)["event_id"] for r in scores)
    assert ids == Counter(valid), "every valid event is scored exactly once"

    dlq = consume_all(bs, topics.dlq, 5)
    by_reason = {dict(r.headers)["ragpulse.error.reason"].decode(): r for r in dlq}
    assert sorted(by_reason) == ["empty_value", "null_value", "oversized", "undecodable_batch"]
    assert len(dlq) == 5
    tomb = by_reason["null_value"]
    assert (tomb.key, tomb.value) == (b"tombstone", None)
    assert dict(tomb.headers)["ragpulse.source.partition"] == b"0"
    assert by_reason["empty_value"].value == b""
    oversized = dict(by_reason["oversized"].headers)
    assert by_reason["oversized"].value == big and oversized["h"] is None  # source header kept
    batches = sorted(
        (
            int(dict(r.headers)["ragpulse.source.offset"]),
            int(dict(r.headers)["ragpulse.source.next_offset"]),
            len(r.value),
        )
        for r in dlq
        if dict(r.headers)["ragpulse.error.reason"] == b"undecodable_batch"
    )
    assert [(a, b) for a, b, _ in batches] == sorted(spans)
    assert all(size > 61 for _, _, size in batches), "the raw batch bytes are kept"

    # lag drains: committed offsets reach the delivered log ends, partition by partition
    ends = _ends(delivered.offsets + bad.offsets + after.offsets)
    ends[3] = max(ends.get(3, 0), *(b for _, b in spans))

    # lag is clamped at 0 on this broker's low watermark; the committed offsets the sidecar
    # exports (the group's, read as an admin tool reads them) are the real check
    def exported(m: dict) -> dict[int, float]:  # type: ignore[type-arg]
        return {p: sample(m, "ragpulse_consumer_committed_offset", partition=str(p)) for p in ends}

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = sc.metrics()
        if exported(m) == ends:
            break
        time.sleep(1)
    assert exported(m) == ends, (exported(m), ends)
    assert all(sample(m, "ragpulse_consumer_lag", partition=str(p)) == 0 for p in ends)
    assert all(sample(m, "ragpulse_consumer_stalled", partition=str(p)) == 0 for p in ends)

    assert sc.terminate() == 0
    # after a graceful stop, the group resumes exactly after the last exported record
    assert _committed(bs, topics.group, topics.input) == ends


@pytest.mark.parametrize("engine", ["aiokafka", "faust"])
def test_transactions_committed_once_and_control_records_never_counted(
    sidecar_factory, broker, tmp_path: Path, engine: str
) -> None:  # type: ignore[no-untyped-def]
    """read_committed is the default. A committed transaction is scored exactly once and
    its control records (commit/abort markers take offsets) are never counted as events.

    On the embedded broker an *aborted* transaction is scored too: it does not return
    the aborted-transactions list a read_committed consumer needs
    (test_embedded_broker_has_no_aborted_transaction_index). Real Kafka does."""
    topics = Topics.unique()
    sc = sidecar_factory(topics, RAGPULSE_ENGINE=engine).start(tmp_path)
    p = _producer(broker.bootstrap_servers, **{"transactional.id": f"tx-{topics.group}"})
    p.init_transactions(20)
    committed = [f"committed-{i}" for i in range(6)]
    aborted = [f"aborted-{i}" for i in range(4)]
    for ids, commit in ((committed[:3], True), (aborted, False), (committed[3:], True)):
        p.begin_transaction()
        for event_id in ids:
            p.produce(topics.input, _event(event_id), key=b"conv-1")
        if commit:
            p.commit_transaction(20)
        else:
            p.flush(20)
            p.abort_transaction(20)
    data = len(committed) + len(aborted)  # 3 control records sit between them
    m = _wait(sc, data)
    assert sample(m, "ragpulse_events_total", outcome="consumed") == data
    assert sample(m, "ragpulse_events_total", outcome="invalid") == 0
    scores = consume_all(broker.bootstrap_servers, topics.scores, data)
    ids = Counter(json.loads(r.value)["event_id"] for r in scores)
    assert all(ids[i] == 1 for i in committed)
    assert all(ids[i] == 1 for i in aborted)  # the embedded broker's limit, see docstring
    assert sc.terminate() == 0
