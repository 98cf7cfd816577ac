"""Judge path end to end: sampled events are judged off the detector path by the embedded
judge, scores reach /metrics, and each judged event gets its scorecard update on rag.scores."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from stream.demo import generate
from tests.conftest import Topics, consume_all, produce, sample

pytestmark = pytest.mark.broker

JUDGE_ENV = {
    "RAGPULSE_JUDGE__BACKEND__TYPE": "embedded",
    "RAGPULSE_SAMPLING__RATE": "1.0",
    # all 12 at once are base turns: without the flagged turns' reserve they fit the bucket
    "RAGPULSE_SAMPLING__BUDGET__RESERVE_FOR_FLAGGED": "0",
    "RAGPULSE_JUDGE__METRICS": '["answer_relevance", "context_relevance", "citation_coverage"]',
    # the budget fits these 12 turns exactly: no judge canary may take a call of it
    "RAGPULSE_JUDGE__HEALTH__CANARIES__ENABLED": "false",
}


def test_sampled_events_are_judged_and_updates_published(
    sidecar_factory,  # type: ignore[no-untyped-def]
    topics: Topics,
    tmp_path: Path,
) -> None:
    events = [g for g in generate(12, seed=5, malformed_rate=0.0)]
    sc = sidecar_factory(topics, **JUDGE_ENV).start(tmp_path)
    produce(sc.bootstrap, topics.input, [(g.key, g.raw) for g in events])
    sc.wait_consumed(len(events))
    deadline = time.monotonic() + 120
    m: dict = {}  # type: ignore[type-arg]
    while time.monotonic() < deadline:
        m = sc.metrics()
        if sample(m, "ragpulse_metric_score_count", metric="citation_coverage") >= len(events):
            break
        time.sleep(1)
    judge = "embedded-minilm-v1"
    assert sample(m, "ragpulse_metric_score_count", metric="answer_relevance") == len(events)
    assert sample(m, "ragpulse_judge_requests_total", judge=judge, outcome="ok") >= len(events)
    assert sample(m, "ragpulse_sampled_total", reason="base") + sum(
        sample(m, "ragpulse_sampled_total", reason=r)
        for r in ("boost_detector", "boost_feedback", "boost_retrieval", "stratum")
    ) == len(events)
    assert sample(m, "ragpulse_sample_rate") == 1.0
    assert 0 <= sample(m, "ragpulse_metric_mean", metric="answer_relevance", window="5m") <= 1

    records = consume_all(sc.bootstrap, topics.scores, 2 * len(events))
    cards = [json.loads(r.value) for r in records]
    updates = {c["event_id"]: c for c in cards if c.get("update") == "judge"}
    assert set(updates) == {g.event_id for g in events}
    one = next(iter(updates.values()))
    assert one["metrics"]["answer_relevance"]["judge"] == judge
    assert 0 <= one["metrics"]["answer_relevance"]["score"] <= 1
    assert one["metrics"]["answer_relevance"]["severity"] in {"severe", "moderate", "minor", "none"}
    # one key per turn: the update carries its scorecard's key (the input record's,
    # here the conversation id), so both land on one partition, scorecard first
    by_event: dict[str, list[tuple[bytes, int, int, bool]]] = {}
    for r in records:
        card = json.loads(r.value)
        by_event.setdefault(card["event_id"], []).append(
            (r.key, r.partition, r.offset, card.get("update") == "judge")
        )
    source_keys = {g.event_id: g.key for g in events}
    for event_id, (scored, update) in by_event.items():
        assert scored[0] == update[0] == source_keys[event_id]
        assert scored[1] == update[1] and scored[2] < update[2] and update[3]
    assert sc.terminate() == 0
