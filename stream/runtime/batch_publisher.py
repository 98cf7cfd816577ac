"""Records of one fetched batch, published as Kafka record batches (the aiokafka engine).

`AIOKafkaProducer.send` costs ~55 µs of CPU per record here (metadata wait, pure-Python
murmur2, a future and an accumulator entry each). :class:`BatchPublisher` appends each
record to one `BatchBuilder` per output partition and submits the builders with
`send_batch` when the engine flushes (once per fetched batch, before the commit), so a
record costs an append. Partitions are chosen as the default partitioner does (murmur2
of the key, the Java client's choice, memoised per key); records without a key go
round-robin.

Every record is sized before it gets here (`stream.runtime.record_size.OutputGuard`): a
fresh builder accepts any first record, so aiokafka's own `max_request_size` check would
not run. A broker can still refuse a whole record batch for one record in it (its own
`message.max.bytes` lower than ours, INVALID_RECORD, a corrupt record): the batch's
records are then sent again one by one, and each one refused alone goes to `refused`
(the engine dead-letters or counts it); the flush goes on. Any other delivery error is
raised, as before.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import murmur2

from stream.runtime.record_size import REFUSED, Record

__all__ = ["BatchPublisher", "Refused"]

#: a record the broker refused alone, and why
Refused = Callable[[Record, Exception], Awaitable[None]]

#: murmur2 results kept (LRU). A conversation's turns arrive close together: on the bundled
#: traffic 256 entries hit as often as 65,536 (37 %), and 65,536 held ~6.6 MiB (soak, tracemalloc)
_KEY_CACHE = 4096


async def _raise(record: Record, exc: Exception) -> None:
    raise exc


class BatchPublisher:
    def __init__(self, producer: AIOKafkaProducer, refused: Refused | None = None) -> None:
        """`refused`: what to do with a record the broker refuses alone (None: raise)."""
        self._producer = producer
        self._refused = refused or _raise
        # (topic, partition) -> BatchBuilder and its records (to send again one by one)
        self._open: dict[tuple[str, int], tuple[Any, list[Record]]] = {}
        self._sent: list[tuple[asyncio.Future[Any], list[Record]]] = []
        self._partitions: dict[str, list[int]] = {}
        self._hashes: OrderedDict[bytes, int] = OrderedDict()
        self._spread = itertools.count()

    async def add(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]],
    ) -> None:
        """Append one record; a full builder is submitted and a new one started."""
        partition = self._partition(topic, key) if topic in self._partitions else None
        if partition is None:
            self._partitions[topic] = sorted(await self._producer.partitions_for(topic))
            partition = self._partition(topic, key)
        slot = (topic, partition)
        record = (topic, key, value, headers)
        entry = self._open.get(slot)
        if entry is not None:
            if entry[0].append(timestamp=None, key=key, value=value, headers=headers):
                entry[1].append(record)
                return
            del self._open[slot]  # full: submit it, start the next one
            await self._submit(slot, entry)
        builder = self._producer.create_batch()
        if builder.append(timestamp=None, key=key, value=value, headers=headers):
            self._open[slot] = (builder, [record])
            return
        try:  # larger than a whole batch: send() says why it fails
            self._sent.append((await self._producer.send(topic, value, key=key,
                                                         headers=headers), [record]))  # fmt: skip
        except REFUSED as exc:
            await self._refused(record, exc)

    def _partition(self, topic: str, key: bytes | None) -> int:
        parts = self._partitions[topic]
        if key is None:
            return parts[next(self._spread) % len(parts)]
        idx = self._hashes.get(key)
        if idx is None:
            idx = self._hashes[key] = murmur2(key) & 0x7FFFFFFF
            if len(self._hashes) > _KEY_CACHE:
                self._hashes.popitem(last=False)
        return parts[idx % len(parts)]

    async def _submit(self, slot: tuple[str, int], entry: tuple[Any, list[Record]]) -> None:
        topic, partition = slot
        fut = await self._producer.send_batch(entry[0], topic, partition=partition)
        self._sent.append((fut, entry[1]))

    async def flush(self) -> None:
        """Submit every open builder and wait until all records are delivered or refused
        one by one (raises the first other delivery error). Partition counts are looked up
        again at the next batch."""
        open_, self._open = self._open, {}
        for slot, entry in open_.items():
            await self._submit(slot, entry)
        sent, self._sent = self._sent, []
        self._partitions.clear()
        if not sent:
            return
        done = await asyncio.gather(*(fut for fut, _ in sent), return_exceptions=True)
        failed = [(exc, recs) for exc, (_, recs) in zip(done, sent, strict=True)
                  if isinstance(exc, BaseException)]  # fmt: skip
        for exc, _ in failed:
            if not isinstance(exc, REFUSED):
                raise exc
        for _, records in failed:  # the broker stored none of a refused batch
            await self._one_by_one(records)

    async def _one_by_one(self, records: list[Record]) -> None:
        """Each record of a refused batch alone (awaited in turn: one record per batch)."""
        for record in records:
            topic, key, value, headers = record
            try:
                await (await self._producer.send(topic, value, key=key, headers=headers))
            except REFUSED as exc:
                await self._refused(record, exc)
