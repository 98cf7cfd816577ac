from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from stream.contract.events import Event
from stream.runtime.sampler import DROPPED_REASONS, SAMPLED_REASONS, Sampler, SamplerSettings

NO_BUDGET = {"calls_per_minute": None, "usd_per_hour": None}
NO_BOOSTS = {"failure_modes": [], "thumbs_down": False, "rating_below": None}


def make(**options: Any) -> Sampler:
    options.setdefault("budget", NO_BUDGET)
    return Sampler(SamplerSettings.model_validate(options), clock=FakeClock())


def ev(event_id: str, **fields: Any) -> Event:
    return Event(event_id=event_id, query="q", response="r", **fields)


def events(n: int, prefix: str = "e", **fields: Any) -> Iterator[Event]:
    """Many synthetic events: copies of one validated event (flat fields only)."""
    template = ev(prefix, **fields)
    return (template.model_copy(update={"event_id": f"{prefix}-{i}"}) for i in range(n))


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def assert_binomial(hits: int, n: int, p: float, z: float = 4.0) -> None:
    """hits/n within z standard errors of p (the hash is deterministic: no flakes)."""
    sigma = math.sqrt(p * (1 - p) / n)
    assert abs(hits / n - p) <= z * sigma, (hits / n, p, sigma)


def sampled(s: Sampler, evs: Iterator[Event], modes: list[str] | None = None) -> int:
    return sum(s.decide(e, modes or []).sampled for e in evs)


@pytest.mark.parametrize("rate", [0.001, 0.05, 0.3])
def test_base_rate_within_binomial_bounds_over_100k_events(rate: float) -> None:
    s = make(rate=rate)
    n = 100_000
    hits = sampled(s, events(n))
    assert_binomial(hits, n, rate)
    assert s.counts["base"] == hits and s.counts["not_selected"] == n - hits
    assert s.effective_rate == rate


def test_a_sampled_conversation_is_judged_on_all_turns_in_every_replica() -> None:
    turns = [  # the turns of all conversations interleaved, as on a topic
        next(events(1, f"c{c}-t{t}", conversation_id=f"conv-{c}", turn_index=t))
        for t in range(4)
        for c in range(20_000)
    ]

    def run(s: Sampler) -> dict[str, set[bool]]:
        seen: dict[str, set[bool]] = {}
        for e in turns:
            seen.setdefault(str(e.conversation_id), set()).add(s.decide(e, []).sampled)
        return seen

    first, replica = run(make(rate=0.1, salt="prod")), run(make(rate=0.1, salt="prod"))
    assert all(len(v) == 1 for v in first.values())  # all turns or none
    chosen = {c for c, v in first.items() if True in v}
    assert chosen == {c for c, v in replica.items() if True in v}
    assert_binomial(len(chosen), 20_000, 0.1)
    other = {c for c, v in run(make(rate=0.1, salt="canary")).items() if True in v}
    assert_binomial(len(chosen & other), 20_000, 0.01)  # another salt: independent choice


def test_raising_the_rate_keeps_the_conversations_already_chosen() -> None:
    low, high = make(rate=0.05), make(rate=0.2)
    evs = [ev(f"e{i}", conversation_id=f"c{i}") for i in range(20_000)]
    at_low = {e.event_id for e in evs if low.decide(e, []).sampled}
    at_high = {e.event_id for e in evs if high.decide(e, []).sampled}
    assert at_low < at_high


def test_most_specific_stratum_wins() -> None:
    s = make(
        rate=0.05,
        strata={
            "service": {"earnings-qa": 0.2, "muted": 0.0},
            "model": {"gpt-x": 0.5},
            "service_model": {"earnings-qa": {"gpt-x": 0.8}},
        },
    )
    n = 20_000
    cases = [
        ({"service": "earnings-qa", "model": "gpt-x"}, 0.8, "stratum"),
        ({"service": "earnings-qa", "model": "other"}, 0.2, "stratum"),
        ({"service": "it-support", "model": "gpt-x"}, 0.5, "stratum"),
        ({"model": "gpt-x"}, 0.5, "stratum"),
        ({"service": "it-support", "model": "other"}, 0.05, "base"),
        ({}, 0.05, "base"),
    ]
    for i, (fields, rate, reason) in enumerate(cases):
        before = s.counts[reason]
        hits = sampled(s, events(n, f"s{i}", **fields))
        assert_binomial(hits, n, rate)
        assert s.counts[reason] - before == hits
    assert sampled(s, events(n, "m", service="muted", model="gpt-x")) == 0


def test_each_boost_always_judges_and_names_itself() -> None:
    s = make(rate=0.0, boosts={"failure_modes": ["pii_leak"], "detectors": ["refusal"]})
    low = [{"id": "a", "content": "x", "score": 0.2}, {"id": "b", "content": "y", "score": 0.4}]
    good = [{"id": "a", "content": "x", "score": 0.2}, {"id": "b", "content": "y", "score": 0.9}]
    cases: list[tuple[dict[str, Any], list[str], list[str], str]] = [
        ({}, ["pii_leak"], [], "boost_detector"),
        ({}, [], ["refusal"], "boost_detector"),
        ({"feedback": {"thumbs": "down"}}, [], [], "boost_feedback"),
        ({"feedback": {"rating": 2}}, [], [], "boost_feedback"),
        ({"retrieved_context": low}, [], [], "boost_retrieval"),
        ({}, ["invented_identifier"], ["pii"], "not_selected"),  # not configured to boost
        ({"feedback": {"thumbs": "up", "rating": 3}}, [], [], "not_selected"),
        ({"retrieved_context": good}, [], [], "not_selected"),
        ({"retrieved_context": [{"id": "a", "content": "x"}]}, [], [], "not_selected"),
    ]
    for i, (fields, modes, detectors, reason) in enumerate(cases):
        for j in range(200):
            d = s.decide(ev(f"b{i}-{j}", **fields), modes, detectors)
            assert (d.sampled, d.reason) == (reason != "not_selected", reason), (fields, modes)


def test_any_failure_mode_boosts_by_default_and_boosts_can_be_switched_off() -> None:
    assert make(rate=0.0).decide(ev("e"), ["training_cutoff_excuse"]).reason == "boost_detector"
    off = make(rate=0.0, boosts={**NO_BOOSTS, "retrieval_score_below": None})
    chunk = [{"id": "a", "content": "x", "score": 0.01}]
    e = ev("e", feedback={"thumbs": "down", "rating": 1}, retrieved_context=chunk)
    assert off.decide(e, ["pii_leak"]).reason == "not_selected"


def test_a_numeric_boost_rate_multiplies_the_rate() -> None:
    s = make(rate=0.05, boosts={"boost_rate": 4})
    n = 50_000
    hits = sampled(s, events(n), ["pii_leak"])
    assert_binomial(hits, n, 0.2)
    # turns the base rate selects anyway stay "base" (the unbiased population)
    assert s.counts["boost_detector"] + s.counts["base"] == hits
    assert_binomial(s.counts["base"], n, 0.05)
    capped = make(rate=0.5, boosts={"boost_rate": 10})
    assert sampled(capped, events(1000), ["pii_leak"]) == 1000


def sliding_max(times: list[float], amounts: list[float], window_s: float) -> float:
    """Largest sum of amounts at times within any half-open window of window_s."""
    best, total, lo = 0.0, 0.0, 0
    for hi, t in enumerate(times):
        total += amounts[hi]
        while times[lo] <= t - window_s:
            total -= amounts[lo]
            lo += 1
        best = max(best, total)
    return best


def test_calls_per_minute_never_exceeded_over_a_simulated_hour() -> None:
    clock = FakeClock()
    budget = {"calls_per_minute": 30, "usd_per_hour": None, "reserve_for_flagged": 0}
    s = Sampler(SamplerSettings(rate=1.0, budget=budget), clock=clock)
    e, times, arrivals = ev("e"), [], 0
    rng = random.Random(7)
    while clock.now < 1000 + 3600:
        clock.now += rng.expovariate(10.0)  # Poisson arrivals, 10/s: 20x the budget
        arrivals += 1
        if s.decide(e, []).sampled:
            times.append(clock.now)
    assert sliding_max(times, [1.0] * len(times), 60.0) <= 30
    assert len(times) >= 0.85 * 30 * 60  # and the budget is used, not starved
    assert s.counts["budget"] == arrivals - len(times) and s.counts["base"] == len(times)


@pytest.mark.parametrize("start_estimate", [0.004, 0.0005, 0.05])
def test_dollars_per_hour_never_exceeded_with_measured_costs(start_estimate: float) -> None:
    clock = FakeClock()
    budget = {"calls_per_minute": None, "usd_per_hour": 1.0, "cost_per_event_usd": start_estimate,
              "reserve_for_flagged": 0}  # fmt: skip
    s = Sampler(SamplerSettings(rate=1.0, budget=budget), clock=clock)
    rng = random.Random(11)
    times: list[float] = []
    costs: list[float] = []
    while clock.now < 1000 + 2 * 3600:
        clock.now += rng.expovariate(5.0)
        d = s.decide(ev("e"), [])
        if d.sampled:
            usd = rng.uniform(0.002, 0.006)  # what the judge calls really cost
            s.record_cost(usd, d.reserved_usd)
            times.append(clock.now)
            costs.append(usd)
    overshoot = 0.006 - min(start_estimate, 0.002)  # one turn's cost above its estimate
    assert sliding_max(times, costs, 3600.0) <= 1.0 + overshoot
    assert sum(costs) >= 0.85 * 2.0  # two hours, the budget is used
    assert s.cost_estimate_usd == pytest.approx(0.004, abs=0.0015)


def test_boosted_turns_respect_the_budget_unless_told_to_bypass_it() -> None:
    budget = {"calls_per_minute": 2, "usd_per_hour": None, "reserve_for_flagged": 0}
    strict = make(rate=0.0, budget=budget)
    decisions = [strict.decide(ev(f"e{i}"), ["pii_leak"]) for i in range(5)]
    # the bucket holds 1 call and refills 1 a minute: the second flagged turn is taken on
    # credit, judged after the refill has paid it back (60 s); debt stops at one bucket
    assert [d.reason for d in decisions] == ["boost_detector"] * 2 + ["budget"] * 3
    assert [d.wait_s for d in decisions[:2]] == [0.0, pytest.approx(60.0)]
    assert strict.deferred == 1
    bypass = make(rate=0.0, budget=budget, boosts_bypass_budget=True)
    assert all(bypass.decide(ev(f"e{i}"), ["pii_leak"]).sampled for i in range(5))
    # a boosted turn the base rate selects anyway is a population turn: it never bypasses
    # the budget as one (that would bias the population toward bad turns); refused there,
    # it is judged as the boosted turn it is, which leaves the population as it was
    pop = make(rate=1.0, budget=budget, boosts_bypass_budget=True)
    reasons = [pop.decide(ev(f"e{i}"), ["pii_leak"]).reason for i in range(5)]
    assert reasons == ["base"] + ["boost_detector"] * 4
    assert pop.counts["base"] == 1 and pop.counts["budget"] == 0


def test_backpressure_scales_the_rate_and_a_full_queue_refuses() -> None:
    s = make(rate=0.2, backpressure_start=0.5)
    n = 50_000
    s.set_pressure(0.4)
    assert s.effective_rate == 0.2
    s.set_pressure(0.75)
    assert s.effective_rate == pytest.approx(0.1)
    hits = sampled(s, events(n))
    assert_binomial(hits, n, 0.1)
    assert_binomial(s.counts["judge_backlog"], n, 0.1)  # chosen, dropped for the backlog
    s.set_pressure(1.0)
    assert s.effective_rate == 0.0
    boosted = s.decide(ev("x", feedback={"thumbs": "down"}), ["pii_leak"])
    assert (boosted.sampled, boosted.reason) == (False, "judge_backlog")
    s.set_pressure(0.0)
    assert s.effective_rate == 0.2
    linear = make(rate=0.2, backpressure_start=0.0)
    linear.set_pressure(0.25)
    assert linear.effective_rate == pytest.approx(0.15)


def test_disabled_sampler_judges_nothing() -> None:
    off = make(enabled=False, rate=1.0)
    decisions = [off.decide(e, ["pii_leak"]) for e in events(100)]
    assert {(d.sampled, d.reason) for d in decisions} == {(False, "disabled")}
    assert off.effective_rate == 0.0 and off.counts["disabled"] == 100
    zero = make(rate=0.0, boosts=NO_BOOSTS)
    assert sampled(zero, events(10_000), ["pii_leak"]) == 0
    assert zero.counts["not_selected"] == 10_000


def test_counters_cover_every_decision_with_bounded_reasons() -> None:
    s = make(rate=0.3, budget={"calls_per_minute": 50, "usd_per_hour": None})
    for i, e in enumerate(events(2000)):
        s.set_pressure((i % 10) / 9)
        s.decide(e, ["pii_leak"] if i % 7 == 0 else [])
    assert set(s.counts) == set(SAMPLED_REASONS + DROPPED_REASONS)
    assert sum(s.counts.values()) == 2000
    assert all(s.counts[r] > 0 for r in ("base", "boost_detector", "budget", "judge_backlog"))


def test_settings_validate_and_describe_every_field() -> None:
    cfg = SamplerSettings.model_validate({"strata": {"service": {"earnings-qa": 0.1}}})
    assert cfg.strata.service == {"earnings-qa": 0.1} and cfg.rate == 0.05
    bad: list[dict[str, Any]] = [
        {"rate": 1.5},
        {"rat": 0.1},
        {"strata": {"service": {"a": -0.1}}},
        {"strata": {"region": {}}},
        {"boosts": {"boost_rate": 0.5}},
        {"boosts": {"boost_rate": "often"}},
        {"budget": {"calls_per_minute": 2, "calls_per_event": 3}},
        {"budget": {"burst_fraction": 1.0}},
    ]
    for data in bad:
        with pytest.raises(ValidationError):
            SamplerSettings.model_validate(data)
    assert SamplerSettings.model_validate({"boosts": {"boost_rate": "5"}}).boosts.boost_rate == 5
    from_env = SamplerSettings.model_validate({"budget": {"usd_per_hour": "null"}})
    assert from_env.budget.usd_per_hour is None  # RAGPULSE_SAMPLING__BUDGET__USD_PER_HOUR=null

    def undescribed(model: type[BaseModel]) -> list[str]:
        out = [n for n, f in model.model_fields.items() if not f.description]
        for f in model.model_fields.values():
            if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
                out += undescribed(f.annotation)
        return out

    assert undescribed(SamplerSettings) == []


def test_a_burst_judges_its_flagged_turns_at_default_settings() -> None:
    """The user trial's burst: 200 events at once, 8 of them flagged (a PII leak among
    them), the flagged ones last so the base-rate turns come first. Default settings: all
    8 are judged, because base/stratum turns may not spend the reserve."""
    from stream.demo.traffic import generate
    from stream.runtime.pipeline import Pipeline
    from stream.runtime.settings import load_settings

    settings = load_settings()
    classify = Pipeline(settings, run_drift=False)
    clean: list[bytes] = []
    flagged: list[tuple[bytes, list[str]]] = []
    for item in generate(3000, seed=7, phase="degraded"):
        result = classify.process(item.raw)
        if result.outcome != "scored" or result.scorecard is None:
            continue
        modes = result.scorecard["failure_modes"]
        if not modes and len(clean) < 192:
            clean.append(item.raw)
        elif modes and len(flagged) < 8 and ("pii_leak" in modes or len(flagged) < 7):
            flagged.append((item.raw, modes))
    assert len(clean) == 192 and len(flagged) == 8
    assert any("pii_leak" in modes for _, modes in flagged)
    sampler = Sampler(settings.sampling, clock=FakeClock())  # one instant: no refill
    pipeline = Pipeline(settings, run_drift=False, sampler=sampler)
    judged = [pipeline.process(raw).judge_event is not None for raw in clean]
    judged_flagged = [pipeline.process(raw).judge_event is not None for raw, _ in flagged]
    assert judged_flagged == [True] * 8
    # the base turns came first and were judged; the flagged ones found their pool spent
    # and were taken on its credit, to be judged as its refill pays for them
    assert sum(judged) >= 1 and sampler.deferred >= 1


def test_flagged_turns_on_credit_keep_every_minute_within_the_budget() -> None:
    """Poisson arrivals at 20x the budget, 1 in 10 flagged (below the budget): no flagged
    turn is dropped, base turns are shed first, and the judge calls, made at decision time
    + wait_s, never exceed calls_per_minute in any sliding minute."""
    clock = FakeClock()
    budget = {"calls_per_minute": 30, "usd_per_hour": None}
    s = Sampler(SamplerSettings(rate=1.0, budget=budget), clock=clock)
    rng = random.Random(3)
    calls: list[float] = []
    flagged = flagged_judged = 0
    while clock.now < 1000 + 3600:
        clock.now += rng.expovariate(10.0)
        bad = rng.random() < 0.1 * 30 / 600  # ~ 10 % of the budget's calls
        flagged += bad
        d = s.decide(ev("c"), ["pii_leak"] if bad else [])
        if d.sampled:
            calls.append(clock.now + d.wait_s)
            flagged_judged += bad
    calls.sort()
    assert flagged_judged == flagged > 100
    assert sliding_max(calls, [1.0] * len(calls), 60.0) <= 30
    # base turns keep the shared 75 % of the budget (less its bucket): flagged ones never
    # starve them, and they never spend the flagged turns' quarter
    assert s.counts["base"] >= 0.95 * 30 * 0.75 * 0.9 * 60


def test_a_flood_of_flagged_turns_does_not_starve_the_population() -> None:
    """Flagged turns at 5x the whole budget: the base/stratum population (the unbiased
    means and gate ratios) still gets judged, and the minute stays within the budget."""
    clock = FakeClock()
    budget = {"calls_per_minute": 30, "usd_per_hour": None}
    s = Sampler(SamplerSettings(rate=0.5, budget=budget), clock=clock)
    rng = random.Random(5)
    calls: list[float] = []
    while clock.now < 1000 + 1800:
        clock.now += rng.expovariate(5.0)
        d = s.decide(ev(f"c{rng.random()}"), ["pii_leak"] if rng.random() < 0.5 else [])
        if d.sampled:
            calls.append(clock.now + d.wait_s)
    calls.sort()
    assert sliding_max(calls, [1.0] * len(calls), 60.0) <= 30
    assert s.counts["base"] >= 0.5 * 30 * 0.75 * 0.9 * 30  # at least half its share
    assert s.counts["boost_detector"] >= 0.9 * 30 * 0.25 * 0.9 * 30


@pytest.mark.parametrize("reserve", [0.0, 0.25])
def test_credit_after_an_idle_spell_keeps_the_minute_within_the_budget(reserve: float) -> None:
    """A full bucket left idle, then a burst of reference turns on credit and base
    traffic: the review's case (the credit must see the tokens as of now)."""
    clock = FakeClock()
    budget = {"calls_per_minute": 60, "usd_per_hour": None, "reserve_for_flagged": reserve}
    s = Sampler(SamplerSettings(rate=1.0, budget=budget), clock=clock)
    calls: list[float] = []
    waits: list[float] = []

    def take(d: Any) -> None:
        if d.sampled:
            calls.append(clock.now + d.wait_s)
            waits.append(d.wait_s)

    take(s.decide(ev("b0"), []))
    clock.now += 1000
    for i in range(200):
        take(s.decide(ev(f"g{i}", labels={"expected_answer": "x"}), []))
    for i in range(600):
        clock.now += 0.1
        take(s.decide(ev(f"b{i}"), []))
    calls.sort()
    assert sliding_max(calls, [1.0] * len(calls), 60.0) <= 60
    assert max(waits) <= 60.0  # never longer than credit_s


def test_no_credit_when_credit_s_is_zero() -> None:
    budget = {"calls_per_minute": 60, "usd_per_hour": 1.0, "credit_s": 0}
    s = make(rate=0.0, budget=budget)
    decisions = [s.decide(ev(f"e{i}"), ["pii_leak"]) for i in range(50)]
    assert all(d.wait_s == 0 for d in decisions) and s.deferred == 0
    assert any(d.reason == "budget" for d in decisions)
