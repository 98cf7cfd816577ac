"""Judge health on the real judge path: the OpenAI client against the loopback judge server,
the real JudgeService, Sampler and CanaryRunner, read back from the Prometheus registry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import monitors.metrics  # noqa: F401  (registers the metrics)
from exporters.prometheus import PromFamilies
from monitors.judges.health_settings import CanarySettings
from monitors.judges.openai import OpenAIJudge
from monitors.metrics.base import create_metric
from stream.contract.events import parse_event
from stream.runtime.canary_runner import CanaryRunner, check_canaries
from stream.runtime.judging import JudgeResult, JudgeService
from stream.runtime.preflight import preflight
from stream.runtime.sampler import Sampler, SamplerSettings
from stream.runtime.settings import ConfigError, Settings
from tests.monitors.judges.fault_server import FaultServer, ok, slow

UNLIMITED = {"calls_per_minute": None, "usd_per_hour": None}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    s = FaultServer().start()
    try:
        yield s
    finally:
        s.stop()


def _service(server: FaultServer, prom: PromFamilies, **options: object) -> JudgeService:
    judge = OpenAIJudge(
        model="fault-judge", base_url=server.base_url, timeout_s=5.0, concurrency=4,
        allow_insecure_http=True,
        prices={"fault-judge": {"prompt_per_1k": 0.5, "completion_per_1k": 1.0}}, **options,
    )  # fmt: skip
    return JudgeService(judge, [create_metric("answer_relevance")], 50, 4, prom)


def _value(prom: PromFamilies, name: str, **labels: str) -> float:
    value = prom.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_canary_rounds_are_exported_costed_and_a_swapped_judge_raises_judge_drift(
    server: FaultServer,
) -> None:
    server.default = ok({"score": 0.8, "justification": "fine"})
    prom = PromFamilies()
    service = _service(server, prom)
    sampler = Sampler(SamplerSettings(budget=UNLIMITED))
    runner = CanaryRunner(CanarySettings(interval_s=0.05), service, prom, sampler)
    judge, name = service.name, runner.canaries.name
    labels = {"judge": judge, "metric": "answer_relevance", "canary_set": name}
    rounds = []

    async def go() -> None:
        for i in range(40):
            if i == 20:  # the judge behind the same name now calls everything poor
                server.default = ok({"score": 0.1, "justification": "poor"})
            if await runner.round():
                rounds.append(i)
                return

    try:
        asyncio.run(go())
    finally:
        service.close(5)
    assert runner.watched == ["answer_relevance"]  # the only enabled metric of the set
    assert rounds and 20 <= rounds[0] <= 26, rounds  # raised within 6 rounds of the swap
    assert _value(prom, "ragpulse_judge_drift_alarm", **labels) == 1
    assert _value(prom, "ragpulse_judge_canary_score", **labels) == pytest.approx(0.1)
    # 6 canaries carry an answer_relevance verdict: 5 expect "fine", 1 a failure
    assert _value(prom, "ragpulse_judge_canary_agreement", **labels) == pytest.approx(1 / 6)
    judged = _value(prom, "ragpulse_judge_canary_rounds_total", judge=judge,
                    canary_set=name, outcome="judged")  # fmt: skip
    calls = _value(prom, "ragpulse_judge_health_calls_total", judge=judge, kind="canary")
    assert calls == judged * 8 == len(server.requests)  # one call per canary turn
    cost = _value(prom, "ragpulse_judge_health_cost_usd_total", judge=judge, kind="canary")
    assert cost > 0 and cost == pytest.approx(_value(prom, "ragpulse_judge_cost_usd_total"))
    # canary turns feed no aggregate of the traffic
    assert _value(prom, "ragpulse_metric_score_count", metric="answer_relevance") == 0


def test_canary_turns_are_charged_to_the_budget_and_the_traffic_gets_the_rest(
    server: FaultServer,
) -> None:
    prom = PromFamilies()
    service = _service(server, prom)
    # 60 calls/min, 75 % of it for base turns, 10 % of that at once (4.5 calls)
    settings = SamplerSettings(rate=1.0, budget={"calls_per_minute": 60.0})
    sampler, untouched = Sampler(settings), Sampler(settings)
    runner = CanaryRunner(CanarySettings(interval_s=0.05), service, prom, sampler)
    try:
        asyncio.run(runner.round())  # 8 turns: charged whatever the pool's level
    finally:
        service.close(5)
    judged = _value(prom, "ragpulse_judge_canary_rounds_total", judge=service.name,
                    canary_set="default", outcome="judged")  # fmt: skip
    assert judged == 1 and len(server.requests) == 8
    traffic = [_event(i) for i in range(6)]
    # the traffic gets what the canaries left: nothing now, 4 turns without them
    assert [sampler.decide(e, ()).sampled for e in traffic] == [False] * 6  # type: ignore[arg-type]
    assert sum(untouched.decide(e, ()).sampled for e in traffic) == 4  # type: ignore[arg-type]


def test_a_canary_schedule_over_a_quarter_of_the_calls_budget_is_refused() -> None:
    budget = SamplerSettings(budget={"calls_per_minute": 60.0}).budget
    check_canaries(CanarySettings(interval_s=32), budget)  # 8 turns: 15 calls/min, the cap
    with pytest.raises(ConfigError, match=r"interval_s: 30 s .* 16\.0 judge calls a minute"):
        check_canaries(CanarySettings(interval_s=30), budget)
    check_canaries(CanarySettings(interval_s=30), SamplerSettings(budget=UNLIMITED).budget)


def _event(i: int) -> object:
    doc = {
        "event_id": f"e-{i}", "query": "How do I reset my VPN token?",
        "response": "Open the portal and click Reset.",
        "retrieved_context": [{"id": f"c{k}", "content": f"chunk {k}"} for k in range(3)],
    }  # fmt: skip
    return parse_event(json.dumps(doc).encode())


def test_a_second_opinion_is_exported_and_in_the_scorecard(server: FaultServer) -> None:
    verdicts = [0.9, 0.4, 0.8, 0.75]  # e-0: flips across 0.6; e-1: agrees (|diff| 0.05)
    server.push(*(ok({"score": v, "justification": "x"}) for v in verdicts))
    prom = PromFamilies()
    service = _service(server, prom)
    service.floor = lambda metric: 0.6
    try:
        results: list[JudgeResult] = [service.judge_now(_event(i), repeat=True) for i in range(2)]
    finally:
        service.close(5)
    assert len(server.requests) == 4
    card = results[0].scorecard_update()
    assert card["metrics"]["answer_relevance"]["score"] == 0.9  # the first verdict counts
    assert card["consistency"]["answer_relevance"] == {
        "first": 0.9, "second": 0.4, "abs_diff": 0.5, "flip": True,
    }  # fmt: skip
    base = {"judge": service.name, "metric": "answer_relevance"}
    assert _value(prom, "ragpulse_judge_consistency_pairs_total", **base, result="flip") == 1
    assert _value(prom, "ragpulse_judge_consistency_pairs_total", **base, result="agree") == 1
    diff = _value(prom, "ragpulse_judge_consistency_abs_diff_sum", **base)
    assert diff == pytest.approx(0.55)
    assert _value(prom, "ragpulse_judge_health_calls_total", judge=service.name,
                  kind="consistency") == 2  # fmt: skip
    # the second verdicts are never scores: two population scores, not four
    assert _value(prom, "ragpulse_metric_score_count", metric="answer_relevance") == 2
    # and the second call saw the chunks in another order
    shown = [json.dumps(r["body"]) for r in server.requests[:2]]
    assert shown[0] != shown[1]


def test_a_deterministic_judge_is_not_asked_twice(server: FaultServer) -> None:
    prom = PromFamilies()
    service = _service(server, prom)
    service.judge.deterministic = True  # type: ignore[union-attr]
    try:
        result = service.judge_now(_event(0), repeat=True)
    finally:
        service.close(5)
    assert len(server.requests) == 1 and result.consistency == {}


def test_the_sampler_pays_for_a_repeat_from_the_budget() -> None:
    settings = SamplerSettings(rate=1.0, budget=UNLIMITED)
    sampler = Sampler(settings, repeat_rate=0.25)
    events = [_event(i) for i in range(2000)]
    decisions = [sampler.decide(e, ()) for e in events]  # type: ignore[arg-type]
    share = sum(d.repeat for d in decisions) / len(decisions)
    assert 0.2 < share < 0.3 and sampler.repeats == sum(d.repeat for d in decisions)
    again = Sampler(settings, repeat_rate=0.25)  # chosen by event id: the same turns
    assert [again.decide(e, ()).repeat for e in events] == [d.repeat for d in decisions]  # type: ignore[arg-type]
    # 4.5 calls at once (60/min, 75 % for base turns, 10 % at once): 4 turns, or 2 twice
    tight = SamplerSettings(rate=1.0, budget={"calls_per_minute": 60.0})
    plain, repeating = Sampler(tight), Sampler(tight, repeat_rate=1.0)
    once = [plain.decide(e, ()) for e in events[:6]]  # type: ignore[arg-type]
    twice = [repeating.decide(e, ()) for e in events[:6]]  # type: ignore[arg-type]
    assert [d.sampled for d in once] == [True] * 4 + [False] * 2
    assert [(d.sampled, d.repeat) for d in twice] == [(True, True)] * 2 + [(False, False)] * 4


def test_liveness_counts_from_start_and_moves_with_each_verdict(server: FaultServer) -> None:
    server.push(slow(0.3))
    prom = PromFamilies()
    service = _service(server, prom)
    labels = {"judge": service.name}
    started = _value(prom, "ragpulse_judge_last_verdict_timestamp_seconds", **labels)
    assert started > 0
    try:
        service.judge_now(_event(0))
    finally:
        service.close(5)
    after = _value(prom, "ragpulse_judge_last_verdict_timestamp_seconds", **labels)
    assert after - started >= 0.3
    assert 0 <= _value(prom, "ragpulse_judge_last_verdict_age_seconds", **labels) < 5


def test_a_bad_canary_file_or_detector_fails_config_print_naming_the_field(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "canaries.jsonl"
    bad.write_text('{"id": "a", "event": {"event_id": "x"}, "expected": {"faithfulness": 1}}\n')
    cases = {
        "judge.health.canaries.file: .*canaries.jsonl:1: event:": {"file": str(bad)},
        "judge.health.canaries.file: .*nope.jsonl": {"file": str(tmp_path / "nope.jsonl")},
        r"judge.health.canaries.detectors.0 \(adwin\): .*delta": {
            "detectors": [{"type": "adwin", "delta": 7}]
        },
    }
    for message, canaries in cases.items():
        settings = Settings.model_validate({"judge": {"health": {"canaries": canaries}}})
        with pytest.raises(ConfigError, match=message):
            preflight(settings)
    off = {"judge": {"health": {"canaries": {"enabled": False, "file": str(bad)}}}}
    preflight(Settings.model_validate(off))  # not used: not checked
