"""The records of the per-stream stage: observations, commands and series state, as data.

Three record types cross Kafka between replicas, all strict JSON decoded by msgspec into
the structs below (unknown fields, wrong types and out-of-range values are rejected; no
record is ever unpickled or evaluated):

- :class:`Observation` on the observation topic, key = series id: one replica's aggregate
  of one series over one interval (rate series: events `n` and ones `k`; score series:
  the judge scores). `producer` + `interval` make a replayed record recognisable.
- :class:`Command` on the observation topic, one per partition: an operator action for
  the whole group (`rebaseline`), applied by each partition's owner.
- the series state on the changelog (:mod:`monitors.fleet.series`), key = group + series.

Every decode takes the raw bytes and a size cap first; :class:`RecordError` carries a
short fixed `reason` for the rejection counter.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from stream.contract.errors import RagpulseError

__all__ = [
    "MAX_SCORES",
    "RECORD_VERSION",
    "Command",
    "Observation",
    "RecordError",
    "decode_control_or_observation",
    "encode",
    "series_id",
    "split_series",
    "strict_decode",
]

RECORD_VERSION = 1
#: judge scores one observation may carry (an interval's sampled turns; more are split)
MAX_SCORES = 4096

Name = Annotated[str, Meta(min_length=1, max_length=200)]
Count = Annotated[int, Meta(ge=0, le=10_000_000)]
Millis = Annotated[int, Meta(ge=0, le=100_000_000_000_000)]
Score = Annotated[float, Meta(ge=0.0, le=1.0)]


class RecordError(RagpulseError, ValueError):
    """A record that failed validation; `reason` is a label value from a fixed set."""

    REASONS = ("too_large", "not_json", "schema", "version", "other_group", "inconsistent")

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason if reason in self.REASONS else "schema"


class Observation(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, tag="obs"):
    v: Annotated[int, Meta(ge=1)]
    group: Name
    producer: Name
    series: Name  # "<kind>|<metric>|<service>", see series_id
    interval: Millis  # start of the interval, ms since the epoch (the producer's clock)
    interval_ms: Annotated[int, Meta(ge=1, le=3_600_000)]
    part: Annotated[int, Meta(ge=0, le=1_000_000)] = 0  # chunks of one interval's scores
    n: Count = 0  # rate series: events in the interval
    k: Count = 0  # rate series: events where the indicator was 1
    scores: Annotated[list[Score], Meta(max_length=MAX_SCORES)] = []
    event_time_max: Millis | None = None  # latest event timestamp seen in the interval


class Command(msgspec.Struct, forbid_unknown_fields=True, tag="cmd"):
    v: Annotated[int, Meta(ge=1)]
    group: Name
    id: Annotated[str, Meta(min_length=8, max_length=64)]
    action: Literal["rebaseline"]
    at: Millis


_decoder = msgspec.json.Decoder(Observation | Command)
_encoder = msgspec.json.Encoder()


def encode(record: Observation | Command) -> bytes:
    return _encoder.encode(record)


def series_id(kind: str, metric: str, service: str) -> str:
    return f"{kind}|{metric}|{service}"


def split_series(sid: str) -> tuple[str, str, str]:
    """(kind, metric, service) of a series id; RecordError when it is not one."""
    parts = sid.split("|")
    if len(parts) != 3 or parts[0] not in ("rate", "score") or not all(parts):
        raise RecordError("schema", "series id is not kind|metric|service")
    return parts[0], parts[1], parts[2]


def strict_decode(decoder: msgspec.json.Decoder[Any], raw: bytes | None, max_bytes: int) -> Any:
    """Size first, then a strict schema: RecordError (too_large, schema, not_json)."""
    if raw is None or len(raw) > max_bytes:
        raise RecordError("too_large" if raw else "schema", "empty or oversized record")
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise RecordError("schema", str(exc)[:200]) from None
    except msgspec.DecodeError as exc:
        raise RecordError("not_json", str(exc)[:200]) from None
    except RecursionError:  # nesting deeper than the interpreter's limit
        raise RecordError("schema", "nested too deeply") from None


def decode_control_or_observation(
    raw: bytes | None, group: str, max_bytes: int
) -> Observation | Command:
    """Validate one record of the observation topic for `group` (RecordError otherwise)."""
    rec: Any = strict_decode(_decoder, raw, max_bytes)
    if rec.v != RECORD_VERSION:
        raise RecordError("version", f"record version {rec.v} (this build reads 1)")
    if rec.group != group:
        raise RecordError("other_group", "a record of another consumer group")
    if isinstance(rec, Observation):
        kind = split_series(rec.series)[0]
        if kind == "rate" and (rec.k > rec.n or rec.scores):
            raise RecordError("inconsistent", "rate observation with k > n or scores")
        if kind == "score" and (rec.n or rec.k):
            raise RecordError("inconsistent", "score observation with counts")
    return rec
