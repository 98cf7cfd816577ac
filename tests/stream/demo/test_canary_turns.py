"""Golden/canary replays in the demo traffic (stream/demo/golden.py): how many, what their
labels carry (the reference of DESIGN.md "The event"), how many answer wrongly per phase,
and the demo settings that let the judge score them."""

from __future__ import annotations

import collections
import json
import random
from typing import Any

import pytest

from stream.contract.events import parse_event
from stream.demo import Generated, generate
from stream.demo.golden import canaries, golden_turn
from stream.demo.run import DEMO_CANARY_INTERVAL_S, DEMO_COMPOUND_WEIGHTS, demo_settings
from stream.runtime.judging_build import build_judging
from stream.runtime.settings import Settings

N = 6000
PHASES = ("baseline", "degraded")


@pytest.fixture(scope="module")
def replays() -> dict[str, list[tuple[Generated, dict[str, Any]]]]:
    out: dict[str, list[tuple[Generated, dict[str, Any]]]] = {}
    for phase in PHASES:
        items = list(generate(N, seed=7, phase=phase))  # type: ignore[arg-type]
        out[phase] = [
            (it, json.loads(it.raw))
            for it in items
            if it.malformed is None and b'"golden_id"' in it.raw
        ]
    return out


def _wrong(phase: str, ev: dict[str, Any]) -> bool:
    """Whether the replay answered wrongly: the generator's own draw for that message."""
    _, seed_part, index = ev["event_id"].split("-")
    domain = "it" if ev["service"] == "it-support" else "earnings"
    rng = random.Random(f"golden:{int(seed_part[1:])}:{phase}:{int(index)}")
    event, _, wrong = golden_turn(rng, domain, phase)
    assert event["response"] == ev["response"] and event["labels"] == ev["labels"]
    return wrong


def test_about_one_replay_in_eighty_messages_in_both_phases(
    replays: dict[str, list[tuple[Generated, dict[str, Any]]]],
) -> None:
    for phase in PHASES:
        per_1000 = 1000 * len(replays[phase]) / N
        assert 9 <= per_1000 <= 17, (phase, per_1000)


def test_replays_carry_their_reference_and_no_failure(
    replays: dict[str, list[tuple[Generated, dict[str, Any]]]],
) -> None:
    seen: set[str] = set()
    for phase in PHASES:
        for it, ev in replays[phase]:
            assert it.truth == [] and it.key == ev["conversation_id"].encode()
            assert ev["conversation_id"].startswith("canary-") and ev["turn_index"] == 0
            assert not ev.get("history") and "feedback" not in ev
            labels = ev["labels"]
            domain = "it" if ev["service"] == "it-support" else "earnings"
            assert labels["golden_id"] in {c["id"] for c in canaries(domain)}
            assert labels["label_source"] == "golden-set-replay"
            assert labels["expected_behavior"] == "answer"
            assert labels["category"] == "should_answer"
            assert isinstance(labels["expected_answer"], str) and labels["expected_answer"]
            required = labels.get("required_information", [])
            assert isinstance(required, list) and all(isinstance(r, str) and r for r in required)
            ref = parse_event(it.raw).reference
            assert ref is not None and ref.present and ref.problems == ()
            seen.add(labels["golden_id"])
    # every canary of both services is replayed; some carry required_information, some not
    assert seen == {c["id"] for d in ("it", "earnings") for c in canaries(d)}
    evs = [ev for phase in PHASES for _, ev in replays[phase]]
    assert any("required_information" in ev["labels"] for ev in evs)
    assert any("required_information" not in ev["labels"] for ev in evs)


def test_most_replays_answer_correctly_and_more_are_wrong_when_degraded(
    replays: dict[str, list[tuple[Generated, dict[str, Any]]]],
) -> None:
    share = {
        phase: sum(_wrong(phase, ev) for _, ev in replays[phase]) / len(replays[phase])
        for phase in PHASES
    }
    assert 0.04 <= share["baseline"] <= 0.2, share
    assert 0.25 <= share["degraded"] <= 0.5, share


def test_replays_take_only_clean_single_turn_conversations() -> None:
    """Replays replace clean single-turn conversations: every other message, and every
    failure-mode count, is what the generator gives without them."""
    for phase in PHASES:
        items = list(generate(1500, seed=3, phase=phase))  # type: ignore[arg-type]
        modes = collections.Counter(m for it in items for m in it.truth)
        replayed = [it for it in items if it.malformed is None and b'"golden_id"' in it.raw]
        assert replayed and all(not it.truth for it in replayed)
        convs = collections.Counter(it.key for it in items)
        assert all(convs[it.key] == 1 for it in replayed)
        assert sum(modes.values()) > 0


def test_demo_settings_score_the_replays() -> None:
    settings, changed = demo_settings(Settings.model_validate({"judge": {"backend": "embedded"}}))
    assert len(changed) == 3
    assert settings.judge.health.canaries.interval_s == DEMO_CANARY_INTERVAL_S  # short demos
    assert settings.judge.metric_names()[-1] == "answer_correctness_analytic"
    assert settings.judge.compound.weights == DEMO_COMPOUND_WEIGHTS
    judging = build_judging(settings)  # the weights name enabled outputs
    assert judging is not None
    judging.close(1)
    # a config that sets its own weights keeps them; its own metrics are left alone
    own = Settings.model_validate(
        {"judge": {"backend": "embedded", "compound": {"weights": {"faithfulness": 1.0}}}}
    )
    kept, _ = demo_settings(own)
    assert kept.judge.compound.weights == {"faithfulness": 1.0}
    own_interval = {"health": {"canaries": {"interval_s": 600}}}
    for cfg in ({"backend": "embedded", "metrics": ["faithfulness"]}, {"backend": "none"}):
        plain = Settings.model_validate({"judge": {**cfg, **own_interval}})
        assert demo_settings(plain) == (plain, [])
