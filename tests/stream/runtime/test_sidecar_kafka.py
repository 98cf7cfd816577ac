"""End to end on the real embedded broker.

topic -> `ragpulse run` subprocess -> /metrics, dead-letter topic, scores topic.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from stream.demo import generate
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import load_settings
from tests.conftest import Topics, consume_all, produce, sample

pytestmark = pytest.mark.broker

MALFORMED: list[tuple[bytes, str]] = [
    (b'{"event_id": "bad-1", "query": "q", "response": ', "invalid_json"),
    (b'{"event_id": "bad-2", "query": 42, "response": "r"}', "invalid_event"),
    (b'{"event_id": "bad-3", "query": "caf\xe9", "response": "r"}', "invalid_utf8"),
    (
        json.dumps({"event_id": "bad-4", "query": "q", "response": "x" * 25_000}).encode(),
        "field_too_large",
    ),
    (b'["not", "an", "object"]', "not_an_object"),
]


def _valid_messages(n: int) -> list[tuple[bytes | None, bytes]]:
    items = [g for g in generate(n, seed=11, malformed_rate=0.0) if g.malformed is None]
    return [(g.key, g.raw) for g in items]


def _expected(
    messages: list[tuple[bytes | None, bytes]],
) -> tuple[Counter[tuple[str, str]], set[str]]:
    """What the same pipeline computes offline on the same bytes (the file twin)."""
    pipeline = Pipeline(load_settings())
    hits: Counter[tuple[str, str]] = Counter()
    ids: set[str] = set()
    for _, raw in messages:
        result = pipeline.process(raw)
        assert result.scorecard is not None
        ids.add(result.scorecard["event_id"])
        hits.update((d["detector"], d["category"]) for d in result.scorecard["detections"])
    return hits, ids


def test_stream_counts_dlq_and_scores_exactly(
    sidecar_factory, topics: Topics, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # 1,200: healthy traffic leaks PII in ~0.35 % of turns; seed 11's first leak is the 1,109th
    valid = _valid_messages(1200)
    malformed = [(None, raw) for raw, _ in MALFORMED]
    expected_hits, expected_ids = _expected(valid)
    assert {d for d, _ in expected_hits} >= {
        "refusal", "policy", "pii", "citations", "identifiers", "source_policy"
    }  # fmt: skip

    sidecar = sidecar_factory(topics).start(tmp_path)
    produce(sidecar.bootstrap, topics.input, valid[:200] + malformed + valid[200:])
    total = len(valid) + len(malformed)
    m = sidecar.wait_consumed(total)

    assert sample(m, "ragpulse_events_total", outcome="consumed") == total
    assert sample(m, "ragpulse_events_total", outcome="scored") == len(valid)
    assert sample(m, "ragpulse_events_total", outcome="invalid") == len(malformed)
    assert sample(m, "ragpulse_events_total", outcome="dead_lettered") == len(malformed)
    assert sample(m, "ragpulse_events_total", outcome="duplicate") == 0
    for (detector, category), count in expected_hits.items():
        got = sample(m, "ragpulse_detector_hits_total", detector=detector, category=category)
        assert got == count, (detector, category)
    for _, reason in MALFORMED:
        assert sample(m, "ragpulse_invalid_events_total", reason=reason) >= 1

    dlq = consume_all(sidecar.bootstrap, topics.dlq, len(malformed))
    assert sorted(r.value for r in dlq) == sorted(raw for raw, _ in MALFORMED)
    reasons = {r.value: dict(r.headers)["ragpulse.error.reason"].decode() for r in dlq}
    assert reasons == {raw: reason for raw, reason in MALFORMED}
    assert all(dict(r.headers)["ragpulse.source.topic"] == topics.input.encode() for r in dlq)

    scores = consume_all(sidecar.bootstrap, topics.scores, len(valid))
    cards = [json.loads(r.value) for r in scores]
    assert len(cards) == len(valid)
    assert {c["event_id"] for c in cards} == expected_ids
    assert all(
        set(c) >= {"event_id", "detections", "failure_modes", "metrics", "sampled"} for c in cards
    )

    # lag is exported per assigned partition and drains to 0 once everything is consumed
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        m = sidecar.metrics()
        lags = {k: v for k, v in m.items() if k[0] == "ragpulse_consumer_lag"}
        if lags and not any(lags.values()):
            break
        time.sleep(0.5)
    assert lags and not any(lags.values()), lags
    assert sample(m, "ragpulse_ready") == 1

    assert sidecar.terminate() == 0, sidecar.output()[-3000:]


def test_sigterm_commits_and_restart_resumes(
    sidecar_factory, topics: Topics, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    valid = _valid_messages(300)
    first, second = valid[:150], valid[150:]
    retried = second[:5]  # a producer retry: the same events again, right after

    # no periodic commit during the first run: only the graceful stop can commit
    one = sidecar_factory(topics, RAGPULSE_KAFKA__COMMIT_INTERVAL_S="600").start(tmp_path)
    produce(one.bootstrap, topics.input, first)
    one.wait_consumed(len(first))
    assert one.terminate() == 0, one.output()[-3000:]

    produce(one.bootstrap, topics.input, second + retried)
    two = sidecar_factory(topics).start(tmp_path)
    m = two.wait_consumed(len(second) + len(retried))
    # graceful stop committed everything: the second process starts where the first stopped
    assert sample(m, "ragpulse_events_total", outcome="consumed") == len(second) + len(retried)
    assert sample(m, "ragpulse_events_total", outcome="duplicate") == len(retried)
    assert sample(m, "ragpulse_events_total", outcome="scored") == len(second)

    scores = consume_all(two.bootstrap, topics.scores, len(valid))
    ids = [json.loads(r.value)["event_id"] for r in scores]
    _, expected_ids = _expected(valid)
    assert set(ids) == expected_ids
    assert len(ids) == len(valid)  # each event scored once: no loss, no double count
    assert two.terminate() == 0
