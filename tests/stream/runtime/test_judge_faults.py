"""Judge outage and abuse (reliability issue, item 5): the judge endpoint is down, hangs,
storms 429 with Retry-After, or returns garbage. For each: the detector path keeps going,
the breaker opens, `judge_error` counts rise with the right reason, no score is invented,
memory stays bounded, and scores resume once the endpoint recovers.

Real parts: Pipeline + Sampler + JudgeService + the OpenAI judge over real loopback HTTP
(the fault server; for "down", a port nobody listens on). Back-off is zeroed by the
autouse fixture in tests/conftest.py; Retry-After sleeps are scaled by it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from exporters.prometheus import PromFamilies
from monitors.judges.breaker import CircuitBreaker
from stream.demo import free_port
from tests.monitors.judges.fault_server import Behaviour, FaultServer, ok, slow, status
from tests.stream.runtime.judge_harness import Driver, openai_service, raw_events, rss_mb, value

EVENTS = 300  # per phase
RATE = 200.0  # events/s
QUEUE = 20
COOLDOWN_S = 1.0


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    yield srv
    srv.stop()


def garbage_body() -> Behaviour:
    """200 with a body that is not a chat completion (a misbehaving proxy)."""
    return Behaviour("status", status=200, body="<html>502 Bad Gateway</html>{{{")


def garbage_json() -> Behaviour:
    """A well-formed completion whose content is not JSON (the model talks nonsense)."""
    return Behaviour("ok", content="<html>502 Bad Gateway</html>{{{")


def _wait(cond: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


SCENARIOS = {
    # name: (server behaviour while faulty, expected judge_error reason, breaker opens)
    "down": (None, "connect_error", True),
    "hanging": (slow(30.0), "timeout", True),
    "429_storm": (status(429, retry_after="1"), "rate_limited", True),
    "garbage_body": (garbage_body(), "server_error", True),
    # the endpoint is healthy, the model's output is not: retried with a correction, not
    # held against the endpoint (monitors/judges/openai.py), so the breaker stays closed
    "garbage_json": (garbage_json(), "invalid_json", False),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_judge_fault_then_recovery(server: FaultServer, name: str) -> None:
    behaviour, reason, opens = SCENARIOS[name]
    prom = PromFamilies()
    if behaviour is None:  # down: connection refused on a port nobody listens on
        base_url = f"http://127.0.0.1:{free_port()}/v1"
    else:
        server.default = behaviour
        base_url = server.base_url
    breaker = CircuitBreaker(failure_threshold=3, reset_after_s=COOLDOWN_S)
    svc = openai_service(
        server, prom, concurrency=2, queue_size=QUEUE, timeout_s=0.5, breaker=breaker,
        max_attempts=2, max_total_s=1.0,
    )  # fmt: skip
    svc.judge.base_url = base_url  # type: ignore[union-attr]
    svc.judge._url = f"{base_url}/chat/completions"  # type: ignore[union-attr]
    driver = Driver(prom, svc)
    raws = raw_events(3 * EVENTS, seed=hash(name) % 1000)
    try:
        rss_before = rss_mb()
        fed = driver.run_paced(raws[:EVENTS], RATE, 30.0)
        assert fed == EVENTS
        # the detector path kept going: every event scored, none waited for the judge
        assert value(prom, "ragpulse_events_total", {"outcome": "scored"}) == EVENTS
        assert driver.max_depth <= QUEUE
        judge = svc.name
        errors = lambda r: value(  # noqa: E731
            prom, "ragpulse_judge_errors_total", {"judge": judge, "reason": r}
        )
        assert _wait(lambda: errors(reason) > 0, 10.0), name
        if opens:
            assert _wait(lambda: errors("circuit_open") > 0, 10.0), name  # the breaker opened
            assert breaker.opened_total >= 1
        else:
            assert breaker.opened_total == 0 and errors("circuit_open") == 0
        failed = value(
            prom, "ragpulse_judge_requests_total", {"judge": judge, "outcome": "judge_error"}
        )
        assert failed > 0
        # no score invented: nothing scored, every judged outcome is a judge_error
        assert value(prom, "ragpulse_judge_requests_total", {"judge": judge, "outcome": "ok"}) == 0
        assert value(prom, "ragpulse_metric_score_count", {"metric": "answer_relevance"}) == 0
        assert all(
            o.status == "judge_error" and o.score is None
            for r in driver.results
            for o in r.outcomes
        )
        # memory bounded while failing
        assert rss_mb() - rss_before < 30.0

        # recovery: the endpoint answers again; after the cooldown the breaker probes, closes
        server.default = ok()
        if behaviour is None:
            svc.judge.base_url = server.base_url  # type: ignore[union-attr]
            svc.judge._url = f"{server.base_url}/chat/completions"  # type: ignore[union-attr]
        assert _wait(lambda: svc._pending == 0, 15.0)
        time.sleep(COOLDOWN_S * 1.1)

        def resumed() -> bool:
            driver.run_paced(raws[EVENTS:], RATE, 0.3)
            return value(prom, "ragpulse_metric_score_count", {"metric": "answer_relevance"}) > 0

        assert _wait(resumed, 15.0), name
        assert breaker.state == "closed"
        scored = [o for r in driver.results for o in r.outcomes if o.status == "scored"]
        assert scored and all(o.score == 0.75 for o in scored)  # the server's answer, verbatim
    finally:
        svc.close(1.0)
