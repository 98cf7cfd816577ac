"""Records ragpulse publishes are bounded: one event can no longer stop the consumer.

The embedded broker has no size limit, so these tests put :class:`SizeLimitProxy` in front
of it: a loopback TCP proxy that forwards every Kafka request and answers like an Apache
Kafka broker with `message.max.bytes` = `limit` (default 1,048,588). It decodes Produce
requests with aiokafka's own protocol structs, takes every partition whose record batch
is over `limit` out of the request and answers it MESSAGE_SIZE_TOO_LARGE (error 10, not
retriable; the rest of the request is forwarded and stored, as Kafka does), and rewrites
the broker address in Metadata and FindCoordinator responses so clients stay behind it.
Responses keep the order of their requests on each connection.
"""

from __future__ import annotations

import asyncio
import json
import struct
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from aiokafka.protocol import coordination, metadata, produce

from stream.demo import EmbeddedBroker
from tests.conftest import SidecarProcess, Topics, consume_all, sample
from tests.conftest import produce as produce_all
from tests.stream.runtime.faults import committed_total, valid_messages

pytestmark = pytest.mark.broker

LIMIT = 1_048_588
_TOO_LARGE = 10  # MESSAGE_SIZE_TOO_LARGE


def _partition_error(version: int, partition: int) -> tuple[Any, ...]:
    base: tuple[Any, ...] = (partition, _TOO_LARGE, -1)
    if version >= 2:
        base += (-1,)
    if version >= 5:
        base += (-1,)
    if version >= 8:
        base += ([], "MESSAGE_SIZE_TOO_LARGE")
    return base


class SizeLimitProxy:
    """Kafka's message.max.bytes check in front of a broker that has none (module doc)."""

    def __init__(self, upstream: str, limit: int = LIMIT) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.limit = limit
        self.port = 0
        self.refused = 0  # record batches answered MESSAGE_SIZE_TOO_LARGE
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> SizeLimitProxy:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        server = loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        loop.run_forever()

    async def _client(self, down_r: asyncio.StreamReader, down_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(*self.upstream)
        order: asyncio.Queue[asyncio.Future[bytes]] = asyncio.Queue()
        inflight: deque[tuple[int, int, list[tuple[str, int]], asyncio.Future[bytes]]] = deque()
        loop = asyncio.get_running_loop()

        async def requests() -> None:
            while True:
                frame = await _frame(down_r)
                api, version, corr = struct.unpack(">hhi", frame[4:12])
                refused: list[tuple[str, int]] = []
                acks = 1
                if api == 0:
                    frame, refused, acks = self._produce(frame, version)
                slot: asyncio.Future[bytes] = loop.create_future()
                if acks != 0:
                    order.put_nowait(slot)
                if frame:
                    inflight.append((api, version, refused, slot))
                    up_w.write(frame)
                    await up_w.drain()
                else:  # every partition refused: Kafka's answer, in order
                    slot.set_result(self._produce_response(corr, version, refused, None))

        async def responses() -> None:
            while True:
                frame = await _frame(up_r)
                api, version, refused, slot = inflight.popleft()
                corr = struct.unpack(">i", frame[4:8])[0]
                if api == 0 and refused:
                    frame = self._produce_response(corr, version, refused, frame[8:])
                elif api in (3, 10):
                    frame = self._readdress(api, version, frame)
                slot.set_result(frame)

        async def writer() -> None:
            while True:
                down_w.write(await (await order.get()))
                await down_w.drain()

        tasks = [asyncio.ensure_future(t()) for t in (requests, responses, writer)]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            down_w.close()
            up_w.close()

    def _produce(self, frame: bytes, version: int) -> tuple[bytes, list[tuple[str, int]], int]:
        """The request without its partitions over the limit (b"" when none is left)."""
        (n,) = struct.unpack(">h", frame[12:14])
        body_at = 14 + max(n, 0)
        cls = getattr(produce, f"ProduceRequest_v{version}")
        req = cls.decode(frame[body_at:])
        refused, kept_topics = [], []
        for topic, parts in req.topics:
            kept = []
            for partition, records in parts:
                if records is not None and len(records) > self.limit:
                    refused.append((topic, partition))
                else:
                    kept.append((partition, records))
            if kept:
                kept_topics.append((topic, kept))
        self.refused += len(refused)
        if not refused:
            return frame, [], req.required_acks
        if not kept_topics:
            return b"", refused, req.required_acks
        req.topics = kept_topics
        body = frame[4:body_at] + req.encode()
        return struct.pack(">i", len(body)) + body, refused, req.required_acks

    def _produce_response(
        self, corr: int, version: int, refused: list[tuple[str, int]], body: bytes | None
    ) -> bytes:
        cls = getattr(produce, f"ProduceResponse_v{version}")
        if body is None:
            resp = cls(**{name: [] if name == "topics" else 0 for name in cls.SCHEMA.names})
        else:
            resp = cls.decode(body)
        topics = {topic: list(parts) for topic, parts in resp.topics}
        for topic, partition in refused:
            topics.setdefault(topic, []).append(_partition_error(version, partition))
        resp.topics = list(topics.items())
        out = struct.pack(">i", corr) + resp.encode()
        return struct.pack(">i", len(out)) + out

    def _readdress(self, api: int, version: int, frame: bytes) -> bytes:
        corr = frame[4:8]
        if api == 3:
            resp = getattr(metadata, f"MetadataResponse_v{version}").decode(frame[8:])
            resp.brokers = [(b[0], "127.0.0.1", self.port, *b[3:]) for b in resp.brokers]
        else:
            resp = getattr(coordination, f"FindCoordinatorResponse_v{version}").decode(frame[8:])
            resp.host, resp.port = "127.0.0.1", self.port
        out = corr + resp.encode()
        return struct.pack(">i", len(out)) + out


async def _frame(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readexactly(4)
    return head + await reader.readexactly(struct.unpack(">i", head)[0])


def _big_event(template: bytes, target: int = 996_050) -> bytes:
    """A valid event whose unknown top-level fields are `9e9` numbers: msgspec writes each
    as 9000000000.0, so the scorecard's `extra` is ~3x the event."""
    event = json.loads(template)
    event["event_id"] = "big-9e9-event"
    raw = json.dumps(event, separators=(",", ":")).encode()
    n, pad = divmod(target - len(raw) - 9, 4)  # ,"nums":[ + n x (9e9,) - 1 + ]}
    first = b"9e" + b"0" * pad + b"9"  # the same number, `pad` bytes longer
    return raw[:-1] + b',"nums":[' + b",".join([first] + [b"9e9"] * (n - 1)) + b"]}"


def _wait(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def test_oversized_scorecard_is_truncated_and_the_stream_goes_on(
    broker: EmbeddedBroker, tmp_path: Path
) -> None:
    """The reviewer's case: a 996,050-byte event (under limits.max_event_bytes) whose
    scorecard would be ~3.2 MB, among normal events, on a broker with Kafka's default
    message.max.bytes. Before: MESSAGE_SIZE_TOO_LARGE, exit 1, nothing committed."""
    topics = Topics.unique("size")
    normal = valid_messages(30, seed=29)
    big = _big_event(normal[0][1])
    assert len(big) == 996_050
    messages = [*normal[:15], (b"conv-big", big), *normal[15:]]
    produce_all(broker.bootstrap_servers, topics.input, messages)
    with SizeLimitProxy(broker.bootstrap_servers) as proxy:
        sc = SidecarProcess(proxy.bootstrap, topics, {"RAGPULSE_ENGINE": "aiokafka"})
        try:
            sc.start(tmp_path)
            m = sc.wait_consumed(len(messages), timeout=90)
            assert _wait(
                lambda: (
                    committed_total(broker.bootstrap_servers, topics.group, topics.input)
                    == len(messages)
                ),
                30,
            ), "the batch with the big event was never committed"
            m = sc.metrics()
            assert sc.proc is not None and sc.proc.poll() is None, sc.output()[-3000:]
        finally:
            sc.kill()
    assert proxy.refused == 0  # nothing over the broker's limit was ever sent
    assert sample(m, "ragpulse_events_total", outcome="scored") == len(messages)
    assert sample(m, "ragpulse_scorecards_truncated_total", part="extra") == 1
    assert sample(m, "ragpulse_scorecards_truncated_total", part="detections") == 0

    records = consume_all(broker.bootstrap_servers, topics.scores, len(messages))
    ids = [json.loads(r.value)["event_id"] for r in records]
    assert sorted(ids) == sorted(json.loads(raw)["event_id"] for _, raw in messages)  # once each
    card_record = next(r for r in records if json.loads(r.value)["event_id"] == "big-9e9-event")
    card = json.loads(card_record.value)
    assert card["truncated"] == ["extra"] and "extra" not in card
    assert "failure_modes" in card and isinstance(card["detections"], list)
    assert len(card_record.value) + len(card_record.key or b"") + 128 <= LIMIT
    others = [json.loads(r.value) for r in records if r is not card_record]
    assert all("truncated" not in c for c in others)


def test_a_record_the_broker_refuses_is_dead_lettered_and_committed(
    broker: EmbeddedBroker, tmp_path: Path
) -> None:
    """The residual case: a broker whose limit (12,000 bytes) is below ragpulse's cap
    refuses whole record batches. The batch's records go again one by one, the one refused
    alone goes to the DLQ as `output_rejected`, every other scorecard is published exactly
    once and the offsets are committed."""
    topics = Topics.unique("refuse")
    normal = valid_messages(20, seed=31)
    event = json.loads(normal[0][1])
    event["event_id"] = "wide-event"
    event["note"] = [9e9] * 1200  # extra: ~15 KB in the scorecard, under the record cap
    wide = json.dumps(event).encode()
    messages = [*normal[:10], (b"conv-wide", wide), *normal[10:]]
    produce_all(broker.bootstrap_servers, topics.input, messages)
    env = {"RAGPULSE_ENGINE": "aiokafka", "RAGPULSE_KAFKA__DLQ_MAX_VALUE_BYTES": "8192"}
    with SizeLimitProxy(broker.bootstrap_servers, limit=12_000) as proxy:
        sc = SidecarProcess(proxy.bootstrap, topics, env)
        try:
            sc.start(tmp_path)
            sc.wait_consumed(len(messages), timeout=90)
            assert _wait(
                lambda: (
                    committed_total(broker.bootstrap_servers, topics.group, topics.input)
                    == len(messages)
                ),
                30,
            )
            m = sc.metrics()
            assert sc.proc is not None and sc.proc.poll() is None, sc.output()[-3000:]
        finally:
            sc.kill()
    assert proxy.refused >= 1
    refused = sample(
        m, "ragpulse_output_records_refused_total",
        record="scorecard", reason="rejected", outcome="dead_lettered",
    )  # fmt: skip
    assert refused == 1
    records = consume_all(broker.bootstrap_servers, topics.scores, len(messages) - 1)
    ids = [json.loads(r.value)["event_id"] for r in records]
    assert "wide-event" not in ids
    assert sorted(ids) == sorted(json.loads(raw)["event_id"] for _, raw in normal)  # once each
    letters = consume_all(broker.bootstrap_servers, topics.dlq, 1)
    assert len(letters) == 1
    headers = dict(letters[0].headers)
    assert headers["ragpulse.error.reason"] == b"output_rejected"
    assert headers["ragpulse.output.topic"] == topics.scores.encode()
