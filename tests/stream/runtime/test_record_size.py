"""Bounded outputs: the record cap, the shedding order, `truncated`, the counters, the
passthrough setting, the DLQ cap's consistency and a broker that refuses a batch."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest
from aiokafka.errors import MessageSizeTooLargeError, RequestTimedOutError

from exporters.prometheus import PromFamilies
from stream.runtime.batch_publisher import BatchPublisher
from stream.runtime.pipeline import Pipeline
from stream.runtime.record_size import (
    KEEP_DETECTIONS,
    OutputGuard,
    record_bytes,
    shed_scorecard,
)
from stream.runtime.settings import ConfigError, load_settings

CAP = 65_536


def _guard(**kafka: Any) -> tuple[OutputGuard, PromFamilies]:
    metrics = PromFamilies()
    s = load_settings(kafka={"max_record_bytes": CAP, "dlq_max_value_bytes": 32_768, **kafka})
    return OutputGuard(s.kafka, metrics), metrics


def _count(metrics: PromFamilies, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def _card(extra: int = 0, detections: int = 0, evidence: str = "e" * 160) -> dict[str, Any]:
    card: dict[str, Any] = {"event_id": "e1", "service": "svc"}
    card["detections"] = [
        {"detector": "pii", "category": "email", "evidence": evidence, "span": [0, 5],
         "failure_mode": "pii_leak"}
        for _ in range(detections)
    ]  # fmt: skip
    card["failure_modes"] = ["pii_leak"] if detections else []
    card["metrics"], card["sampled"] = {}, False
    if extra:
        card["extra"] = {"nums": [9e9] * extra}
    return card


def test_record_bytes_counts_key_value_headers_and_framing() -> None:
    assert record_bytes(None, None) == 128
    assert record_bytes(b"k" * 10, b"v" * 100) == 238
    assert record_bytes(b"k", b"v", [("h", b"xy"), ("é", None)]) == 128 + 2 + (10 + 3) + (10 + 2)


def test_a_record_within_the_cap_is_sent_as_it_is() -> None:
    guard, metrics = _guard()
    body = msgspec.json.encode(_card(extra=10, detections=3))
    assert guard.fit("rag.scores", b"key", body, None) == ("rag.scores", b"key", body, [])
    assert _count(metrics, "ragpulse_scorecards_truncated_total", part="extra") == 0


def test_shedding_order_extra_then_evidence_then_detections() -> None:
    # extra alone is enough
    body, parts = shed_scorecard(_card(extra=20_000, detections=3), 20_000)
    card = json.loads(body)
    assert parts == ["extra"] and card["truncated"] == ["extra"] and "extra" not in card
    assert card["detections"][0]["evidence"] == "e" * 160
    # evidence next, the detections all kept
    body, parts = shed_scorecard(_card(extra=10, detections=150), 20_000)
    card = json.loads(body)
    assert parts == ["extra", "evidence"] and len(card["detections"]) == 150
    assert all(d["evidence"] == "" for d in card["detections"])
    # then the detections past the cap; failure_modes stay complete
    body, parts = shed_scorecard(_card(detections=5_000), 20_000)
    card = json.loads(body)
    assert parts == ["evidence", "detections"] and card["truncated"] == parts
    assert len(card["detections"]) == KEEP_DETECTIONS and card["detections_total"] == 5_000
    assert card["failure_modes"] == ["pii_leak"] and len(body) <= 20_000


def test_guard_sheds_counts_and_fits_the_cap() -> None:
    guard, metrics = _guard()
    body = msgspec.json.encode(_card(extra=20_000, detections=2_000))
    assert len(body) > 3 * CAP
    out = guard.fit("rag.scores", b"conversation-1", body, None)
    assert out is not None and out[0] == "rag.scores"
    card = json.loads(out[2] or b"")
    assert card["truncated"] == ["extra", "evidence", "detections"]
    assert record_bytes(out[1], out[2], out[3]) <= CAP
    for part in ("extra", "evidence", "detections"):
        assert _count(metrics, "ragpulse_scorecards_truncated_total", part=part) == 1
    assert _count(metrics, "ragpulse_scorecards_truncated_total", part="justification") == 0


def test_judge_update_sheds_justification() -> None:
    guard, metrics = _guard()
    update = {"event_id": "e1", "update": "judge", "sampled": True,
              "metrics": {f"m{i}": {"score": 0.5, "justification": "j" * 500,
                                    "details": {"x": "d" * 500}} for i in range(100)}}  # fmt: skip
    out = guard.fit("rag.scores", b"e1", json.dumps(update).encode(), None)
    assert out is not None
    got = json.loads(out[2] or b"")
    assert got["truncated"] == ["justification"]
    assert all(m["justification"] == "" and "details" not in m for m in got["metrics"].values())
    assert _count(metrics, "ragpulse_scorecards_truncated_total", part="justification") == 1


def test_what_still_does_not_fit_is_dead_lettered_and_a_dead_letter_is_dropped() -> None:
    guard, metrics = _guard()
    key = b"k" * (CAP + 10)  # no shedding makes room for this key
    out = guard.fit("rag.scores", key, msgspec.json.encode(_card(extra=5)), None)
    assert out is not None and out[0] == "rag.interactions.dlq"
    headers = dict(out[3])
    assert headers["ragpulse.error.reason"] == b"output_too_large"
    assert headers["ragpulse.output.topic"] == b"rag.scores"
    assert record_bytes(out[1], out[2], out[3]) <= CAP
    labels = {"record": "scorecard", "reason": "too_large", "outcome": "dead_lettered"}
    assert _count(metrics, "ragpulse_output_records_refused_total", **labels) == 1
    assert guard.fit("rag.interactions.dlq", key, b"x", None) is None
    labels = {"record": "dead_letter", "reason": "too_large", "outcome": "dropped"}
    assert _count(metrics, "ragpulse_output_records_refused_total", **labels) == 1
    out = guard.fit("rag.alarms", key, b"{}", None)
    assert out is not None and out[0] == "rag.interactions.dlq"


def test_dlq_cap_over_the_record_cap_fails_at_start() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.dlq_max_value_bytes"):
        load_settings(kafka={"max_record_bytes": 100_000, "dlq_max_value_bytes": 200_000})
    with pytest.raises(ConfigError, match="max_record_bytes"):
        load_settings(kafka={"max_record_bytes": 4096})
    assert load_settings().kafka.max_record_bytes == 1_048_588


def test_passthrough_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.dumps({"event_id": "p1", "query": "q", "response": "r", "retrieved_context": [],
                      "tenant": "t1", "user_email": "a@example.com"})  # fmt: skip

    def card(setting: Any) -> dict[str, Any]:
        s = load_settings(scorecard={"extra": setting}, drift={"enabled": False})
        result = Pipeline(s, run_drift=False).process(raw)
        assert result.scorecard is not None
        return result.scorecard

    assert load_settings().scorecard.extra == "all"
    assert card("all")["extra"] == {"tenant": "t1", "user_email": "a@example.com"}
    assert "extra" not in card("none")
    assert card(["tenant", "other"])["extra"] == {"tenant": "t1"}
    assert "extra" not in card(["other"])
    monkeypatch.setenv("RAGPULSE_SCORECARD__EXTRA", '["tenant"]')
    assert load_settings().scorecard.extra == ["tenant"]
    with pytest.raises(ConfigError, match=r"scorecard\.extra"):
        load_settings(scorecard={"extra": "some"})


class _Builder:
    def __init__(self) -> None:
        self.n = 0

    def append(self, **_: Any) -> bool:
        self.n += 1
        return self.n <= 3


class _Producer:
    """A broker that refuses every batch holding the record b"big" (INVALID/too large)."""

    def __init__(self, error: Exception) -> None:
        self.error, self.stored, self.batches = error, [], 0

    async def partitions_for(self, topic: str) -> set[int]:
        return {0}

    def create_batch(self) -> _Builder:
        return _Builder()

    async def send_batch(self, builder: _Builder, topic: str, partition: int) -> Any:
        self.batches += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        fut.set_exception(self.error)
        return fut

    async def send(self, topic: str, value: bytes, key: Any = None, headers: Any = None) -> Any:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if value == b"big":
            fut.set_exception(self.error)
        else:
            self.stored.append(value)
            fut.set_result(None)
        return fut


def test_a_refused_batch_is_sent_again_one_by_one() -> None:
    refused: list[tuple[Any, Exception]] = []

    async def on_refused(record: Any, exc: Exception) -> None:
        refused.append((record, exc))

    async def go(error: Exception) -> _Producer:
        producer = _Producer(error)
        pub = BatchPublisher(producer, on_refused)  # type: ignore[arg-type]
        for value in (b"a", b"big", b"b", b"c", b"d"):
            await pub.add("t", None, value, [])
        await pub.flush()
        return producer

    producer = asyncio.run(go(MessageSizeTooLargeError()))
    assert producer.batches == 2
    assert producer.stored == [b"a", b"b", b"c", b"d"]  # each once
    assert [r[0][2] for r in refused] == [b"big"]
    with pytest.raises(RequestTimedOutError):  # any other delivery error still raises
        asyncio.run(go(RequestTimedOutError()))
