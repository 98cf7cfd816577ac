"""Records a well-behaved producer never writes, put on the real broker for the tests.

`produce_corrupt_batch` appends one record batch whose bytes do not decode: a flipped
byte after the CRC was computed (`crc`), or an uncompressed batch flagged as gzip with a
valid CRC (`codec`). The embedded broker stores both as sent; a real Kafka broker would
refuse them at produce time, so on real Kafka they arrive only through disk or network
corruption. An unknown codec id (5-7) is refused by the embedded broker too
(`test_embedded_broker_refuses_an_unknown_codec`).
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Literal

from aiokafka import AIOKafkaProducer
from aiokafka.record._crc32c import crc as crc32c

__all__ = ["produce_corrupt_batch"]

_ATTRIBUTES = 21  # v2 batch header: attributes (int16) at byte 21, CRC (uint32) at 17


def _fix_crc(buf: bytearray) -> None:
    struct.pack_into(">I", buf, 17, crc32c(bytes(buf[_ATTRIBUTES:])))


def _set_codec(buf: bytearray, codec: int) -> None:
    attrs = struct.unpack_from(">h", buf, _ATTRIBUTES)[0]
    struct.pack_into(">h", buf, _ATTRIBUTES, (attrs & ~7) | codec)
    _fix_crc(buf)


async def _produce(
    bootstrap: str, topic: str, partition: int, ids: list[str], how: str
) -> tuple[int, int]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        batch = producer.create_batch()
        for event_id in ids:
            value = json.dumps({"event_id": event_id, "query": "q", "response": "r"}).encode()
            batch.append(key=b"corrupt", value=value, timestamp=None)
        buf = batch._build()  # the bytes aiokafka will send, changed in place
        if how == "crc":
            buf[-3] ^= 0xFF
        elif how == "codec":
            _set_codec(buf, 1)  # "gzip", but the records are not gzip
        else:
            _set_codec(buf, int(how))
        meta = await (await producer.send_batch(batch, topic, partition=partition))
        return meta.offset, meta.offset + len(ids)
    finally:
        await producer.stop()


def produce_corrupt_batch(
    bootstrap: str,
    topic: str,
    partition: int,
    ids: list[str],
    how: Literal["crc", "codec", "5", "6", "7"] = "crc",
) -> tuple[int, int]:
    """Append one undecodable batch; returns its (first offset, next offset)."""
    return asyncio.run(_produce(bootstrap, topic, partition, ids, how))
