"""JudgeService: bounded queue off the detector path, exports, never an invented score."""

from __future__ import annotations

import threading
import time

from exporters import PromFamilies
from monitors.judges.base import JudgeCall, JudgeError, SupportResult
from monitors.metrics.base import MetricOutcome
from stream.contract.events import Event
from stream.runtime.judging import JudgeResult, JudgeService, RollingMeans


class SlowJudge:
    name = "stub-embedded"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.release = threading.Event()

    def support(self, text: str, contexts: list[str]) -> SupportResult:
        return SupportResult(0.5)

    def relevance(self, query: str, texts: list[str]) -> list[float]:
        return [0.5 for _ in texts]


class EchoMetric:
    """Scores len(response) / 10; raises JudgeError on 'fail', a bug on 'bug'."""

    name = "echo"
    needs = frozenset({"response"})
    outputs = ("echo",)

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate

    async def __call__(self, event: Event, judge: object) -> list[MetricOutcome]:
        if self.gate is not None:
            while not self.gate.is_set():
                import asyncio

                await asyncio.sleep(0.01)
        if event.response == "fail":
            err = JudgeError("rate_limited", "429", JudgeCall("stub", "m", attempts=3))
            return [
                MetricOutcome("echo", "judge_error", judge="stub", reason=err.reason, call=err.call)
            ]
        if event.response == "bug":
            raise RuntimeError("metric bug")
        call = JudgeCall(
            "stub", "m", prompt_tokens=10, completion_tokens=5, latency_s=0.2, cost_usd=0.01
        )
        return [MetricOutcome("echo", "scored", len(event.response) / 10, "ok", "stub", call=call)]


def _event(i: int, response: str = "abcde") -> Event:
    return Event.model_validate({"event_id": f"e{i}", "query": "q", "response": response})


def test_scores_errors_and_bugs_are_exported_and_never_invented() -> None:
    prom = PromFamilies()
    svc = JudgeService(SlowJudge(), [EchoMetric()], queue_size=10, concurrency=2, prom=prom)
    try:
        ok = svc.judge_now(_event(1))
        assert (
            ok.outcomes[0].score == 0.5
            and ok.scorecard_update()["metrics"]["echo"]["severity"] == "moderate"
        )
        failed = svc.judge_now(_event(2, "fail"))
        assert failed.outcomes[0].status == "judge_error" and failed.outcomes[0].score is None
        bug = svc.judge_now(_event(3, "bug"))
        assert (
            bug.outcomes[0].status == "judge_error" and bug.outcomes[0].reason == "internal_error"
        )
    finally:
        svc.close(1)
    v = prom.registry.get_sample_value
    assert v("ragpulse_judge_requests_total", {"judge": "stub", "outcome": "ok"}) == 1
    assert v("ragpulse_judge_requests_total", {"judge": "stub", "outcome": "judge_error"}) == 1
    assert v("ragpulse_judge_errors_total", {"judge": "stub", "reason": "rate_limited"}) == 1
    assert (
        v("ragpulse_judge_errors_total", {"judge": "stub-embedded", "reason": "internal_error"})
        == 1
    )
    assert v("ragpulse_metric_score_count", {"metric": "echo"}) == 1
    assert v("ragpulse_metric_mean", {"metric": "echo", "window": "5m"}) == 0.5
    assert v("ragpulse_judge_cost_usd_total") == 0.01
    assert v("ragpulse_judge_tokens_total", {"direction": "prompt"}) == 10


def test_queue_is_bounded_and_submit_never_blocks() -> None:
    gate = threading.Event()
    prom = PromFamilies()
    svc = JudgeService(SlowJudge(), [EchoMetric(gate)], queue_size=3, concurrency=1, prom=prom)
    done: list[JudgeResult] = []
    try:
        started = time.perf_counter()
        accepted = [svc.submit(_event(i), done.append) for i in range(10)]
        assert time.perf_counter() - started < 0.5  # while the judge is stuck
        assert accepted == [True] * 3 + [False] * 7
        assert svc.fill() == 1.0
        assert prom.registry.get_sample_value("ragpulse_pipeline_queue_depth") == 3
        gate.set()
        deadline = time.monotonic() + 5
        while len(done) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sorted(r.event_id for r in done) == ["e0", "e1", "e2"]
        assert svc.fill() == 0.0 and svc.submit(_event(99), done.append)
    finally:
        assert svc.close(5) == 0


def test_flagged_turns_go_first_and_a_credited_turn_waits() -> None:
    gate = threading.Event()
    svc = JudgeService(SlowJudge(), [EchoMetric(gate)], queue_size=10, concurrency=1)
    done: list[JudgeResult] = []
    try:
        assert svc.submit(_event(0), done.append)  # takes the one slot, stuck on the gate
        time.sleep(0.1)
        for i, reason in [(1, "base"), (2, "base"), (3, "boost_detector"), (4, "reference")]:
            assert svc.submit(_event(i), done.append, reason)
        started = time.monotonic()
        assert svc.submit(_event(5), done.append, "boost_detector", wait_s=0.6)
        time.sleep(0.1)
        gate.set()
        deadline = time.monotonic() + 5
        while len(done) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        order = [r.event_id for r in done]
        assert order[:5] == ["e0", "e3", "e4", "e1", "e2"]  # flagged before base, FIFO within
        assert order[5] == "e5" and time.monotonic() - started >= 0.6
    finally:
        assert svc.close(5) == 0


def test_close_reports_work_left_behind() -> None:
    gate = threading.Event()
    svc = JudgeService(SlowJudge(), [EchoMetric(gate)], queue_size=5, concurrency=1)
    for i in range(4):
        assert svc.submit(_event(i), lambda r: None)
    assert svc.close(0.2) == 4


def test_rolling_means_forget_old_values() -> None:
    now = [0.0]
    r = RollingMeans({"1m": 60, "1h": 3600}, lambda: now[0])
    r.add("k", 1.0)
    now[0] = 120
    assert r.add("k", 0.0) == {"1m": 0.0, "1h": 0.5}


def test_one_span_per_metric_call_with_error_type() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    svc = JudgeService(SlowJudge(), [EchoMetric()], 5, 1, tracer=provider.get_tracer("test"))
    try:
        svc.judge_now(_event(1))
        svc.judge_now(_event(2, "fail"))
    finally:
        svc.close(1)
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["gen_ai.evaluation echo"] * 2
    assert spans[0].attributes["gen_ai.response.id"] == "e1"
    assert "error.type" not in spans[0].attributes
    assert spans[1].attributes["error.type"] == "rate_limited"
