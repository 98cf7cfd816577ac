"""Backpressure: a judge 10x slower than arrivals keeps memory bounded and the detector
path at full speed.

Real parts: the Pipeline (all detectors), the Sampler (every turn at the base rate, no
budget), the JudgeService with the OpenAI judge over real loopback HTTP to the fault
server, which answers every request after `LATENCY_S`. Judge capacity is
CONCURRENCY / LATENCY_S = 10 calls/s; events arrive at 10x that (100/s) for
`RAGPULSE_BACKPRESSURE_S` seconds (default 60).

The detector path's speed is compared side by side, in the same process and run:
no-judge slices before and after the slow-judge phase (sandwiching it, so a change in
machine load hits both), speed = events per second of processing time. No absolute
timing threshold.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from exporters.prometheus import PromFamilies
from tests.monitors.judges.fault_server import FaultServer, slow
from tests.stream.runtime.judge_harness import Driver, openai_service, raw_events, rss_mb, value

SECONDS = float(os.environ.get("RAGPULSE_BACKPRESSURE_S", "60"))
LATENCY_S = 0.2
CONCURRENCY = 2
QUEUE = 50
RATE = 10 * CONCURRENCY / LATENCY_S  # arrivals: 10x the judge's capacity
RSS_GROWTH_MB = 40.0  # bound on RSS growth over the slow-judge phase (after warm-up)
SPEED_MARGIN = 0.5  # the detector path keeps >= 50 % of its no-judge speed (noise margin)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    srv = FaultServer().start()
    srv.default = slow(LATENCY_S)
    yield srv
    srv.stop()


@pytest.mark.slow  # a minute of simulated load: the e2e tier
def test_slow_judge_bounded_memory_and_full_speed_detectors(server: FaultServer) -> None:
    side = SECONDS * 0.1  # each no-judge slice
    main = SECONDS * 0.8
    raws = raw_events(int(RATE * SECONDS * 1.1) + 100)
    plain_prom = PromFamilies()
    plain = Driver(plain_prom, None)
    pos = plain.run_paced(raws, RATE, side)

    prom = PromFamilies()
    svc = openai_service(server, prom, CONCURRENCY, QUEUE)
    judged = Driver(prom, svc)
    warm = judged.run_paced(raws[pos:], RATE, min(5.0, main / 4))
    pos += warm
    rss_start = rss_mb()
    pos += judged.run_paced(raws[pos:], RATE, main - min(5.0, main / 4))
    rss_end = rss_mb()
    left = svc.close(0.5)
    pos += plain.run_paced(raws[pos:], RATE, side)

    # arrivals outran the judge: it was busy, never over its bounds, and the rest was shed
    calls = len(server.requests)
    assert calls >= 0.5 * CONCURRENCY / LATENCY_S * main  # the judge served near capacity
    assert judged.events >= 5 * calls  # ... and arrivals were far more than it could take
    assert server.max_in_flight <= CONCURRENCY
    assert judged.max_depth <= QUEUE
    assert value(prom, "ragpulse_pipeline_queue_depth") <= QUEUE
    dropped = value(prom, "ragpulse_dropped_total", {"reason": "judge_backlog"})
    assert dropped >= judged.events - calls - QUEUE - left
    assert value(prom, "ragpulse_sample_rate") < 1.0  # the sampler lowered its rate
    ok = value(prom, "ragpulse_judge_requests_total", {"judge": svc.name, "outcome": "ok"})
    scored = [o for r in judged.results for o in r.outcomes if o.status == "scored"]
    assert ok == len(scored) > 0  # judged turns were scored, each counted once

    # memory bounded: RSS after warm-up does not grow with the backlog it refused
    assert rss_end - rss_start < RSS_GROWTH_MB, (rss_start, rss_end)

    # the detector path kept its speed: every event processed, none waited on the judge
    assert value(prom, "ragpulse_events_total", {"outcome": "scored"}) == judged.events
    assert judged.throughput >= SPEED_MARGIN * plain.throughput, (
        judged.throughput,
        plain.throughput,
    )
    print(
        f"\nbackpressure {SECONDS:.0f}s: {judged.events} events at {RATE:.0f}/s, "
        f"{calls} judge calls, dropped {dropped:.0f}, max depth {judged.max_depth}/{QUEUE}, "
        f"RSS {rss_start:.1f}->{rss_end:.1f} MB, detector path {judged.throughput:.0f} ev/s "
        f"(no judge {plain.throughput:.0f} ev/s)"
    )
