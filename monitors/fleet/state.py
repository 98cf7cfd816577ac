"""A series' state on the changelog: versioned, schema-checked data, never a pickle.

One record per series, key ``<group>|<series id>``, on the changelog partition that
matches the series' observation partition. It holds the merger (marks, pending
intervals), each drift stream's own state (written by the detector's `to_state`), the
observation offset it covers, the operator commands it applied and the alarm
transitions not yet confirmed published (the outbox). :func:`decode_state` checks the
envelope; the detectors check their own parts when they load them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from monitors.fleet.records import RecordError, strict_decode

__all__ = ["STATE_VERSION", "AlarmRecord", "SeriesRecord", "decode_state", "encode_state"]

STATE_VERSION = 1

Name = Annotated[str, Meta(min_length=1, max_length=200)]
Finite = Annotated[float, Meta(ge=-1e300, le=1e300)]


class AlarmRecord(msgspec.Struct, forbid_unknown_fields=True):
    """An alarm transition as published on the alarms topic (the outbox keeps these)."""

    state: Literal["raised", "cleared"]
    metric: Name
    detector: Name
    service: Name
    direction: Literal["up", "down"]
    reference_mean: Finite | None
    current_mean: Finite | None
    samples_seen: Annotated[int, Meta(ge=0)]
    since: Annotated[str, Meta(max_length=64)]
    at: Annotated[str, Meta(max_length=64)]
    alarm_id: Annotated[str, Meta(max_length=64)] | None = None


class SeriesRecord(msgspec.Struct, forbid_unknown_fields=True):
    v: Annotated[int, Meta(ge=1)]
    group: Name
    series: Name
    partition: Annotated[int, Meta(ge=0, le=100_000)]
    offset: Annotated[int, Meta(ge=0)]
    merger: dict[str, Any]
    streams: Annotated[dict[str, dict[str, Any]], Meta(max_length=16)]
    commands: Annotated[list[Annotated[str, Meta(max_length=64)]], Meta(max_length=32)] = []
    outbox: Annotated[list[AlarmRecord], Meta(max_length=16)] = []


_decoder = msgspec.json.Decoder(SeriesRecord)
_encoder = msgspec.json.Encoder()


def encode_state(record: SeriesRecord) -> bytes:
    return _encoder.encode(record)


def decode_state(raw: bytes | None, group: str, series: str, max_bytes: int) -> SeriesRecord:
    """Validate a changelog value for `group`'s `series` (RecordError otherwise)."""
    rec: SeriesRecord = strict_decode(_decoder, raw, max_bytes)
    if rec.v != STATE_VERSION:
        raise RecordError("version", f"state version {rec.v} (this build reads 1)")
    if rec.group != group or rec.series != series:
        raise RecordError("inconsistent", "state record of another group or series")
    return rec
