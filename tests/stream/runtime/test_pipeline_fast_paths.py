"""The scorecard and the sampler's decision take shortcuts that give the same results as
the straightforward code (kept verbatim below as the reference)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Collection
from typing import Any

import pytest

from detectors import Detection
from stream.contract.events import Event
from stream.runtime.pipeline import _CONTEXT_FIELDS, scorecard
from stream.runtime.sampler import SampleDecision, Sampler, SamplerSettings


def _old_scorecard(
    event: Event, detections: list[Detection], sampled: bool = False
) -> dict[str, Any]:
    modes = sorted({d.failure_mode for d in detections if d.failure_mode})
    card: dict[str, Any] = {"event_id": event.event_id}
    for name in _CONTEXT_FIELDS:
        value = getattr(event, name)
        if value is not None:
            card[name] = value.isoformat() if name == "timestamp" else value
    card["detections"] = [d.to_dict() for d in detections]
    card["failure_modes"] = modes
    card["metrics"] = {}
    card["sampled"] = sampled
    if event.model_extra:
        card["extra"] = event.model_extra
    return card


class OldSampler(Sampler):
    def decide(
        self, event: Event, failure_modes: Collection[str], detectors: Collection[str] = ()
    ) -> SampleDecision:
        s = self.settings
        if not s.enabled:
            return self._count(False, "disabled")
        if self._fill >= 1.0:
            return self._count(False, "judge_backlog")
        if s.references and (ref := event.reference) is not None and ref.present:
            return self._spend("reference", bypass=False)
        rate, reason = self._rate(event)
        boost = self._boost(event, failure_modes, detectors)
        if boost is not None and self.position(event) < rate * self._scale:
            population = self._spend(reason, bypass=False, count=False)
            if population.sampled:
                self.counts[reason] += 1
                return population
        if boost is not None:
            reason = boost
        if boost is None or s.boosts.boost_rate != "always":
            if boost is not None:
                rate = min(1.0, rate * float(s.boosts.boost_rate))
            where = self.position(event)
            if where >= rate:
                return self._count(False, "not_selected")
            if where >= rate * self._scale:
                return self._count(False, "judge_backlog")
        return self._spend(reason, bypass=boost is not None and s.boosts_bypass_budget)

    def _rate(self, event: Event) -> tuple[float, str]:
        st, service, model = self.settings.strata, event.service, event.model
        pairs = st.service_model.get(service, {}) if service is not None else {}
        for table, key in ((pairs, model), (st.service, service), (st.model, model)):
            if key is not None and (rate := table.get(key)) is not None:
                return rate, "stratum"
        return self.settings.rate, "base"

    def _count(self, sampled: bool, reason: str, usd: float = 0.0) -> SampleDecision:
        self.counts[reason] += 1
        return SampleDecision(sampled, reason, usd)


def _events(n: int, seed: int) -> list[Event]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        fields: dict[str, Any] = {
            "event_id": f"e{i}",
            "query": "q",
            "response": "r",
            "conversation_id": f"c{rng.randrange(n // 3)}",
            "service": rng.choice(["svc-a", "svc-b", None]),
            "model": rng.choice(["m1", "m2", None]),
            "retrieved_context": [
                {"id": f"d{k}", "content": "x", "score": rng.random()}
                for k in range(rng.randrange(3))
            ],
        }
        if rng.random() < 0.1:
            fields["feedback"] = {"thumbs": "down"}
        if rng.random() < 0.05:
            fields["labels"] = {"expected_answer": "yes"}
        if rng.random() < 0.2:
            fields["timestamp"] = "2026-03-02T10:00:00Z"
            fields["environment"] = "prod"
            fields["turn_index"] = 2
            fields["prompt_version"] = "v1"
            fields["surprise"] = {"k": 1}
        out.append(Event.model_validate(fields))
    return out


def test_scorecard_matches_the_straightforward_code() -> None:
    hits = [
        Detection("refusal", "refusal", "I cannot", (0, 8), "false_rejection"),
        Detection("pii", "email", "a@b.c", None, "pii_leak"),
        Detection("citations", "invalid", "[9]", (3, 6), None),
    ]
    for i, event in enumerate(_events(300, 1)):
        found = hits[: i % 4]
        for sampled in (False, True):
            card = scorecard(event, found, sampled)
            old = _old_scorecard(event, found, sampled)
            assert card == old and list(card) == list(old)


SETTINGS: list[dict[str, Any]] = [
    {},
    {"rate": 0.3, "boosts": {"boost_rate": 2.0}},
    {"rate": 0.2, "boosts": {"boost_rate": 4.0}, "boosts_bypass_budget": True},
    {
        "strata": {
            "service": {"svc-a": 0.5},
            "model": {"m2": 0.05},
            "service_model": {"svc-b": {"m1": 0.9}},
        },
        "budget": {"calls_per_minute": 30},
    },
    {"enabled": False},
]


@pytest.mark.parametrize("options", SETTINGS)
def test_sampler_decides_as_the_straightforward_code(options: dict[str, Any]) -> None:
    settings = SamplerSettings.model_validate(options)
    ticks_new, ticks_old = itertools.count(), itertools.count()
    new = Sampler(settings, clock=lambda: next(ticks_new) * 0.7)
    old = OldSampler(settings, clock=lambda: next(ticks_old) * 0.7)
    fills = itertools.cycle([0.0, 0.6, 0.9, 1.0, 0.4])
    rng = random.Random(2)
    for event in _events(3000, 3):
        fill = next(fills)
        new.set_pressure(fill)
        old.set_pressure(fill)
        modes = ["pii_leak"] if rng.random() < 0.1 else []
        detectors = {"refusal"} if rng.random() < 0.1 else set()
        assert new.decide(event, modes, detectors) == old.decide(event, modes, detectors)
    assert new.counts == old.counts
    assert new.cost_estimate_usd == old.cost_estimate_usd


def test_a_keyless_turn_is_keyed_by_its_conversation_then_its_event_id() -> None:
    from stream.runtime.pipeline import Pipeline, turn_key
    from stream.runtime.settings import load_settings

    pipeline = Pipeline(load_settings(), run_drift=False)
    with_conv = pipeline.process(
        b'{"event_id":"e1","conversation_id":"c9","query":"q","response":"r"}'
    )
    without = pipeline.process(b'{"event_id":"e2","query":"q","response":"r"}')
    assert turn_key(with_conv) == b"c9" and turn_key(without) == b"e2"
