"""Every record ragpulse publishes fits `kafka.max_record_bytes` (docs/reliability.md).

A record's size is counted as key + value + every header's name and value, plus
:data:`RECORD_OVERHEAD` bytes of batch framing (a record batch header is 61 bytes, a
record's own varints at most 36) and :data:`HEADER_OVERHEAD` per header (its two length
varints). That is never less than aiokafka's own estimate, so a producer whose
`max_request_size` is the cap accepts every record this admits, and one record alone
in a batch is never over a broker whose `message.max.bytes` is the cap.

The check costs one `len` per record. Only a record over the cap is looked at again: a
scorecard sheds `extra`, then detection evidence, then the detections past
:data:`KEEP_DETECTIONS` (failure_modes stay complete) and says so in `"truncated"`; a judge
update sheds its metrics' justification (and details). A record that still does not fit,
or that the broker refuses, becomes a dead letter (`output_too_large` /
`output_rejected`); a dead letter that does not fit is dropped and counted.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from aiokafka import errors as kafka_errors

from exporters.prometheus import PromFamilies
from stream.runtime.dead_letters import Headers, output_letter
from stream.runtime.settings import KafkaSettings

__all__ = [
    "HEADER_OVERHEAD",
    "KEEP_DETECTIONS",
    "RECORD_OVERHEAD",
    "REFUSED",
    "OutputGuard",
    "Record",
    "record_bytes",
    "shed_scorecard",
    "shed_update",
]

log = logging.getLogger(__name__)

RECORD_OVERHEAD = 128
HEADER_OVERHEAD = 10
#: detections a truncated scorecard keeps (the first ones; `detections_total` counts all)
KEEP_DETECTIONS = 100

Record = tuple[str, bytes | None, bytes | None, Headers]
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class InvalidRecordError(kafka_errors.BrokerResponseError):
    """INVALID_RECORD (87): aiokafka has no class for it and would report UnknownError."""

    errno = 87
    message = "INVALID_RECORD"
    description = "The broker's validation of a record in the batch failed."


kafka_errors.kafka_errors.setdefault(InvalidRecordError.errno, InvalidRecordError)

#: what a broker (or the client) answers for a record that will never be accepted as it is
REFUSED: tuple[type[Exception], ...] = (
    kafka_errors.MessageSizeTooLargeError,
    kafka_errors.RecordListTooLargeError,
    kafka_errors.RecordTooLargeError,
    kafka_errors.CorruptRecordException,
    kafka_errors.kafka_errors[InvalidRecordError.errno],
)


def record_bytes(key: bytes | None, value: bytes | None, headers: Headers | None = None) -> int:
    """The size a record counts against `kafka.max_record_bytes`."""
    n = RECORD_OVERHEAD + (len(key) if key is not None else 0)
    n += len(value) if value is not None else 0
    if headers:
        for name, val in headers:
            n += HEADER_OVERHEAD + len(name.encode()) + (len(val) if val is not None else 0)
    return n


def shed_scorecard(card: dict[str, Any], room: int) -> tuple[bytes, list[str]]:
    """Shed parts of `card` in order until its encoding is at most `room` bytes: the
    encoding and the parts shed (it may still be over `room` when nothing is left)."""
    parts: list[str] = []
    body = b""
    for part in ("extra", "evidence", "detections"):
        dets = card.get("detections")
        if part == "extra":
            if card.pop("extra", None) is None:
                continue
        elif part == "evidence":
            if not isinstance(dets, list) or not any(
                isinstance(d, dict) and d.get("evidence") for d in dets
            ):
                continue
            for d in dets:
                if isinstance(d, dict) and "evidence" in d:
                    d["evidence"] = ""
        else:
            if not isinstance(dets, list) or len(dets) <= KEEP_DETECTIONS:
                continue
            card["detections"] = dets[:KEEP_DETECTIONS]
            card["detections_total"] = len(dets)
        parts.append(part)
        card["truncated"] = parts
        body = _encode(card)
        if len(body) <= room:
            break
    return body or _encode(card), parts


def shed_update(update: dict[str, Any]) -> tuple[bytes, list[str]]:
    """A judge update without its metrics' justification and details."""
    shed = False
    metrics = update.get("metrics")
    for m in metrics.values() if isinstance(metrics, dict) else ():
        if isinstance(m, dict):
            shed = bool(m.pop("details", None)) or shed
            if m.get("justification"):
                m["justification"] = ""
                shed = True
    parts = ["justification"] if shed else []
    if parts:
        update["truncated"] = parts
    return _encode(update), parts


class OutputGuard:
    """Sizes every record before it is sent; what cannot go out is dead-lettered or counted."""

    def __init__(self, kafka: KafkaSettings, prom: PromFamilies) -> None:
        self.cap, self.dlq_cap = kafka.max_record_bytes, kafka.dlq_max_value_bytes
        self.scores, self.dlq, self.alarms = kafka.scores_topic, kafka.dlq_topic, kafka.alarms_topic
        self.prom = prom
        self._logged: set[tuple[str, str]] = set()

    def fit(
        self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None
    ) -> Record | None:
        """The record to send in place of this one: itself when it fits (the common case),
        shed, or its dead letter; None when it is dropped (counted)."""
        size = record_bytes(key, value, headers)
        if size <= self.cap:
            return topic, key, value, headers or []
        kind, doc = self._kind(topic, value)
        if doc is not None and value is not None:
            if kind == "scorecard":
                body, parts = shed_scorecard(doc, self.cap - (size - len(value)))
            else:
                body, parts = shed_update(doc)
            for part in parts:
                self.prom.scorecards_truncated.labels(part).inc()
            if record_bytes(key, body, headers) <= self.cap:
                return topic, key, body, headers or []
            value = body
        detail = f"{size} bytes, over kafka.max_record_bytes ({self.cap})"
        return self.refused(topic, key, value, headers, "too_large", detail, kind)

    def refused(
        self, topic: str, key: bytes | None, value: bytes | None, headers: Headers | None,
        reason: str, detail: str, kind: str | None = None,
    ) -> Record | None:  # fmt: skip
        """The dead letter of a record that cannot be published (None: a dead letter that
        cannot be published either, dropped and counted)."""
        kind = kind or self._kind(topic, value)[0]
        outcome = "dropped" if topic == self.dlq else "dead_lettered"
        self.prom.output_refused.labels(kind, reason, outcome).inc()
        if (kind, reason) not in self._logged:  # once per kind: no flood, no record content
            self._logged.add((kind, reason))
            log.warning("%s on %s %s (%s): %s; counting further ones silently", kind, topic,
                        "dropped" if outcome == "dropped" else "dead-lettered", reason,
                        detail)  # fmt: skip
        if outcome == "dropped":
            return None
        k, v, h = output_letter(f"output_{reason}", detail, topic, key, value, headers or [],
                                self.dlq_cap)  # fmt: skip
        return self.dlq, k, v, h

    def _kind(self, topic: str, value: bytes | None) -> tuple[str, dict[str, Any] | None]:
        if topic == self.dlq:
            return "dead_letter", None
        if topic != self.scores:
            return ("alarm" if topic == self.alarms else "observation"), None
        try:
            doc = _decode(value) if value is not None else None
        except msgspec.DecodeError:
            doc = None
        if isinstance(doc, dict):
            return ("judge_update" if doc.get("update") == "judge" else "scorecard"), doc
        return "scorecard", None
