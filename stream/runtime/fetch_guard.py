"""Never stall on a record batch the Kafka client cannot decode.

aiokafka raises out of `getmany` when a fetched record batch fails its CRC check or is
compressed with a codec it cannot decompress, and it raises again on every later call:
the partition stalls there for good. Records of other batches that were already
unpacked in the failing call are lost with the exception, because the client's position
has already moved past them.

:class:`FetchGuard` wraps `getmany`. On such an error it

1. puts every assigned partition back where delivery stopped: the later of the record
   after the last one it returned and the group's committed offset (a partition that a
   rebalance takes meanwhile is left alone);
2. steps through each partition one record at a time, so a failure loses nothing, and
   returns the good records;
3. when a partition fails at offset *p*, reads the raw batch at *p* with one Fetch
   request. If those bytes really do not decode, it moves the partition past the batch
   and reports a :class:`SkippedBatch` (offsets and raw bytes, for the dead-letter
   topic). If they decode, or cannot be read whole, the error was not about these bytes:
   the partition waits a second and the next fetch tries again. Nothing here ends the
   process; a failure that persists shows as a stalled partition.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import aiokafka.errors as Errors
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.record.memory_records import MemoryRecords

from stream.runtime import kafka_private

__all__ = ["FetchGuard", "SkippedBatch", "undecodable"]

log = logging.getLogger(__name__)

_RAW_FETCH_BYTES = 8 * 1024 * 1024  # one raw Fetch: enough for the batch at the offset
_PROBE_MS = 500  # careful mode: wait this long for a partition's first record
_RETRY_S = 1.0  # a batch that cannot be judged now: the partition waits this long


@dataclass(frozen=True, slots=True)
class SkippedBatch:
    """Offsets [first_offset, next_offset) of one partition that could not be decoded."""

    topic: str
    partition: int
    first_offset: int
    next_offset: int
    reason: str  # the client's exception type
    detail: str
    raw: bytes  # the batch as the broker sent it (empty when it could not be cut out)

    @property
    def count(self) -> int:
        return self.next_offset - self.first_offset


def undecodable(exc: BaseException) -> bool:
    """True for errors raised while unpacking fetched bytes (CRC, codec, format).

    Kafka protocol and coordination errors (`KafkaError` subclasses other than the two
    about record bytes) are not: they say nothing about a batch.
    """
    if isinstance(exc, Errors.CorruptRecordException | Errors.UnsupportedCodecError):
        return True
    return isinstance(exc, Exception) and not isinstance(exc, Errors.KafkaError)


def _decode_error(raw: bytes, check_crcs: bool) -> str | None:
    """Why aiokafka cannot unpack this one batch, or None when it can."""
    try:
        batch = MemoryRecords(raw).next_batch()
        if batch is None:
            return None
        if check_crcs and not batch.validate_crc():
            return "invalid CRC"
        for _ in batch:
            pass
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _batch_at(raw: bytes, offset: int) -> tuple[int, int, bytes] | None:
    """(first offset, next offset, bytes) of the batch holding `offset`, read from headers only."""
    pos = 0
    while pos + 17 <= len(raw):
        base = int.from_bytes(raw[pos : pos + 8], "big", signed=True)
        length = int.from_bytes(raw[pos + 8 : pos + 12], "big", signed=True)
        end = pos + 12 + length
        if length < 15 or end > len(raw):
            return None  # a partial batch at the end of the response, or no batch header
        chunk = raw[pos:end]
        # v2 batch: last offset delta at byte 23; v0/v1: a wrapper's offset is its last one
        last = base + int.from_bytes(chunk[23:27], "big", signed=True) if chunk[16] >= 2 else base
        if last >= offset:
            return base, last + 1, chunk
        pos = end
    return None


class FetchGuard:
    """`getmany` that skips (and reports) undecodable batches instead of raising forever."""

    def __init__(self, consumer: AIOKafkaConsumer, check_crcs: bool = True) -> None:
        self._consumer = consumer
        self._check_crcs = check_crcs
        self._next: dict[TopicPartition, int] = {}  # next offset to deliver, per partition
        self.skipped: list[SkippedBatch] = []  # reported, not yet taken by the engine

    def forget(self, partitions: Any) -> None:
        """Partitions revoked: their delivery points are the next owner's business."""
        for tp in partitions:
            self._next.pop(tp, None)

    def take_skipped(self) -> list[SkippedBatch]:
        skipped, self.skipped = self.skipped, []
        return skipped

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[TopicPartition, list[Any]]:
        try:
            batch = await self._consumer.getmany(timeout_ms=timeout_ms, max_records=max_records)
        except Exception as exc:
            if not undecodable(exc):
                raise
            return await self.careful(max_records, exc)
        self.note(batch)
        return batch

    def note(self, batch: Mapping[Any, list[Any]]) -> None:
        """Records were handed on: delivery continues after the last of each partition.
        Partitions no longer assigned are forgotten (the faust engine has no revoke hook
        here)."""
        if self._next:
            assigned = self._consumer.assignment()
            for tp in [tp for tp in self._next if tp not in assigned]:
                del self._next[tp]
        for tp, records in batch.items():
            if records:
                self._next[TopicPartition(tp.topic, tp.partition)] = records[-1].offset + 1

    async def careful(
        self, max_records: int, exc: Exception, partitions: Iterable[Any] | None = None
    ) -> dict[TopicPartition, list[Any]]:
        """After `exc` (see `undecodable`): the good records, one partition at a time."""
        log.warning("a fetched batch does not decode (%s): stepping", type(exc).__name__)
        consumer = self._consumer
        wanted = None if partitions is None else {(tp.topic, tp.partition) for tp in partitions}
        assigned = sorted(
            (tp for tp in consumer.assignment() if wanted is None or tuple(tp) in wanted),
            key=lambda tp: (tp.topic, tp.partition),
        )
        usable = []
        for tp in assigned:  # back to where delivery stopped: nothing unpacked is lost
            try:
                await self._rewind(tp)
            except Errors.KafkaError as err:  # revoked meanwhile, or no coordinator now
                log.warning("partition %d: cannot rewind (%s)", tp.partition, type(err).__name__)
                continue
            usable.append(tp)
        out: dict[TopicPartition, list[Any]] = {}
        budget = max_records
        for tp in usable:
            try:
                budget = await self._step(tp, budget, out)
            except Errors.KafkaError as err:  # not about bytes: a rebalance took it, say
                log.warning("partition %d: stepping stopped (%s)", tp.partition, type(err).__name__)
        return out

    async def _rewind(self, tp: TopicPartition) -> None:
        """Seek to the later of the last delivered record + 1 and the committed offset (a
        delivery point kept from before a rebalance may be stale)."""
        consumer = self._consumer
        committed = None
        with contextlib.suppress(Errors.IllegalOperation):  # no group: nothing committed
            committed = await consumer.committed(tp)
        known = [o for o in (self._next.get(tp), committed) if o is not None]
        if known:
            consumer.seek(tp, max(known))

    async def _step(
        self, tp: TopicPartition, budget: int, out: dict[TopicPartition, list[Any]]
    ) -> int:
        """One partition, one record at a time, skipping batches that do not decode."""
        consumer, wait = self._consumer, _PROBE_MS
        while budget > 0 and tp in consumer.assignment():  # a rebalance may take it
            pos = await consumer.position(tp)
            try:
                got = await consumer.getmany(tp, timeout_ms=wait, max_records=1)
            except Exception as again:
                if not undecodable(again):
                    raise
                if not await self._skip(tp, pos, again):
                    break  # nothing to skip now: the next fetch tries again
                wait = _PROBE_MS
                continue
            records = got.get(tp, [])
            if not records:
                break
            out.setdefault(tp, []).extend(records)
            self._next[tp] = records[-1].offset + 1
            budget -= len(records)
            wait = 0  # the rest of this fetch is buffered
        return budget

    async def _skip(self, tp: TopicPartition, pos: int, exc: Exception) -> bool:
        """Move past the batch at `pos` if its bytes really do not decode (True).

        Otherwise (False) the partition waits and the next fetch tries again: the process
        never ends over a record, and a failure that persists shows as a stalled partition
        (`ragpulse_consumer_stalled`)."""
        try:
            found = await self._raw_batch(tp, pos)
        except Errors.KafkaError as err:
            log.warning("cannot read the batch at offset %d: %s", pos, type(err).__name__)
            await asyncio.sleep(_RETRY_S)
            return False
        why = None if found is None else _decode_error(found[2], self._check_crcs)
        if found is None or why is None:  # no batch to blame, or it decodes: not the bytes
            log.error(
                "partition %d offset %d: %s while fetching, but the batch there %s; retrying",
                tp.partition, pos, type(exc).__name__,
                "could not be read whole" if found is None else "decodes",
            )  # fmt: skip
            await asyncio.sleep(_RETRY_S)
            return False
        first, nxt, raw = found
        first = max(first, pos)
        self._consumer.seek(tp, nxt)
        self._next[tp] = nxt
        log.warning(
            "skipped undecodable batch: partition %d offsets %d..%d (%s)",
            tp.partition, first, nxt - 1, type(exc).__name__,
        )  # fmt: skip
        self.skipped.append(
            SkippedBatch(tp.topic, tp.partition, first, nxt, type(exc).__name__, why, raw)
        )
        return True

    async def _raw_batch(self, tp: TopicPartition, offset: int) -> tuple[int, int, bytes] | None:
        """The batch holding `offset`, as raw bytes, from one Fetch to the partition leader."""
        client = kafka_private.client(self._consumer)
        node = client.cluster.leader_for_partition(tp)
        if node is None or node < 0:
            return None
        isolation = 1 if kafka_private.isolation_level(self._consumer) == "read_committed" else 0
        request = FetchRequest(
            _PROBE_MS, 1, _RAW_FETCH_BYTES, isolation,
            [(tp.topic, [(tp.partition, offset, _RAW_FETCH_BYTES)])],
        )  # fmt: skip
        response = await client.send(node, request)
        for _topic, partitions in response.topics:
            for part in partitions:
                if part[0] == tp.partition and part[1] == 0 and part[-1]:
                    return _batch_at(bytes(part[-1]), offset)
        return None
