"""Reference turns (labels.expected_answer ...) through the runtime: always sampled with
reason `reference` within the budget, kept out of the population of unlabelled traffic
(their reference-based scores are exported as those metrics' own population), and the
compound score from configured weights."""

from __future__ import annotations

from typing import Any

import pytest

from exporters import PromFamilies
from monitors.judges.settings import CompoundSettings
from monitors.metrics.base import MetricOutcome
from stream.contract.events import Event
from stream.runtime.judging import JudgeService
from stream.runtime.judging_build import build_judging
from stream.runtime.sampler import Sampler, SamplerSettings
from stream.runtime.settings import ConfigError, Settings, load_settings
from tests.stream.runtime.test_judging import SlowJudge

GOLD = {"expected_answer": "Restart the agent."}


def ev(event_id: str, **labels: Any) -> Event:
    return Event(event_id=event_id, query="q", response="Restart the agent.", labels=labels)


def test_reference_turns_are_always_sampled_within_the_budget() -> None:
    budget = {"calls_per_minute": 2, "usd_per_hour": None, "reserve_for_flagged": 0}
    s = Sampler(SamplerSettings.model_validate({"rate": 0.0, "budget": budget}))
    reasons = [s.decide(ev(f"g{i}", **GOLD), []).reason for i in range(4)]
    # the second is taken on the budget's credit (judged after the refill), as a flagged
    # turn would be; the debt stops at one bucket
    assert reasons == ["reference", "reference", "budget", "budget"]
    off = Sampler(SamplerSettings.model_validate({"rate": 0.0, "references": False}))
    assert off.decide(ev("g", **GOLD), []).reason == "not_selected"
    # at rate 1 a reference turn still never counts as a population (base) turn
    all_in = Sampler(
        SamplerSettings.model_validate({"rate": 1.0, "budget": budget | {"calls_per_minute": None}})
    )
    assert all_in.decide(ev("g", **GOLD), []).reason == "reference"
    assert all_in.decide(ev("u"), []).reason == "base"
    # labels without a usable reference (only helpful information, or an empty answer)
    assert all_in.decide(ev("h", helpful_information="tip", expected_answer=" "), []).reason == (
        "base"
    )


class RefMetric:
    """A reference-free score (0.9) and a reference-based one (0.3)."""

    name = "ref"
    needs = frozenset({"response"})
    outputs = ("plain", "answer_correctness")

    async def __call__(self, event: Event, judge: object) -> list[MetricOutcome]:
        return [
            MetricOutcome("plain", "scored", 0.9, "ok", "stub"),
            MetricOutcome("answer_correctness", "scored", 0.3, "ok", "stub", reference_based=True),
        ]


def test_reference_turn_exports_apart_from_the_population() -> None:
    prom = PromFamilies()
    weights = {"plain": 1.0, "answer_correctness": 3.0}
    svc = JudgeService(SlowJudge(), [RefMetric()], 10, 1, prom=prom, compound=weights)
    try:
        ref = svc.judge_now(ev("g1", **GOLD), reason="reference")
        pop = svc.judge_now(ev("u1"), reason="base")
    finally:
        svc.close(1)
    assert ref.compound == pytest.approx((0.9 + 3 * 0.3) / 4)
    assert ref.scorecard_update()["compound"] == pytest.approx(0.45)
    # the reference turn: only its reference-based score (and the compound, which weighs
    # it) feed the aggregates; its reference-free score is a boosted-style observation
    assert ref.aggregate_scores() == {"answer_correctness": 0.3, "compound": pytest.approx(0.45)}
    assert pop.aggregate_scores() == {
        "plain": 0.9,
        "answer_correctness": 0.3,
        "compound": pytest.approx(0.45),
    }
    v = prom.registry.get_sample_value
    assert v("ragpulse_metric_score_count", {"metric": "plain"}) == 1  # the base turn only
    assert v("ragpulse_metric_score_count", {"metric": "answer_correctness"}) == 2
    assert v("ragpulse_boosted_metric_score_count", {"metric": "plain", "reason": "reference"}) == 1
    assert (
        v(
            "ragpulse_boosted_metric_score_count",
            {"metric": "answer_correctness", "reason": "reference"},
        )
        is None
    )
    assert v("ragpulse_compound_score", {"window": "5m"}) == pytest.approx(0.45)
    assert v("ragpulse_compound_weight", {"metric": "answer_correctness"}) == 3.0
    # weights over reference-free scores only: a reference turn's compound stays out
    plain = JudgeService(SlowJudge(), [RefMetric()], 10, 1, compound={"plain": 1.0})
    try:
        assert "compound" not in plain.judge_now(ev("g2", **GOLD), "reference").aggregate_scores()
        assert plain.judge_now(ev("u2"), "base").aggregate_scores()["compound"] == 0.9
    finally:
        plain.close(1)


def test_compound_needs_every_weighted_score() -> None:
    c = CompoundSettings(weights={"a": 1.0, "b": 0.0, "c": 2.0})
    assert c.score({"a": 1.0, "c": 0.4}) == pytest.approx(0.6)  # b has weight 0: not needed
    assert c.score({"a": 1.0}) is None
    assert CompoundSettings().score({"a": 1.0}) is None
    with pytest.raises(ValueError, match="at least one weight"):
        CompoundSettings(weights={"a": 0.0})


def test_compound_weights_must_name_enabled_outputs() -> None:
    settings = Settings.model_validate(
        {"judge": {"metrics": ["faithfulness"], "compound": {"weights": {"answer_f1": 1.0}}}}
    )
    with pytest.raises(ConfigError, match=r"judge\.compound\.weights .*\['answer_f1'\]"):
        build_judging(settings)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGPULSE_JUDGE__COMPOUND__WEIGHTS", '{"faithfulness": -1}')
        with pytest.raises(ConfigError, match=r"judge\.compound"):
            load_settings(None)
        mp.setenv("RAGPULSE_JUDGE__COMPOUND__WEIGHTS", '{"faithfulness": 0.7}')
        assert load_settings(None).judge.compound.weights == {"faithfulness": 0.7}
