"""Smoke runs of the perf benchmarks (bench/perf): the harness works, in seconds.

Not measurements: the full runs are `python -m bench.perf.detectors` and
`python -m bench.perf.economy` (see BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from bench.perf import breakdown, detectors, economy
from bench.perf.llm_server import CountingProxy
from bench.perf.naive_patterns import EngineMatcher, NaiveMatcher, pattern_table
from tests.monitors.judges.fault_server import FaultServer, ok, status


def test_detectors_smoke_run_checks_equivalence_and_renders() -> None:
    result = detectors.run(1, smoke=True)
    eq = result["equivalence"]
    assert result["responses"] == 100 and result["patterns"] >= 60
    assert eq["engine_pairs"] > 30  # the traffic has hits for the packs, PII, identifiers
    assert eq["ascii_identical"]  # with re.ASCII, the naive loop finds exactly the same pairs
    assert all(adv["naive"]["seconds"] for adv in result["adversarial"].values())
    text = detectors.markdown(result)
    assert "| naive `re.search` loop |" in text and "Smoke run" in text


def test_breakdown_smoke_run_times_every_part() -> None:
    result = breakdown.run(1, 60)
    us = result["us_per_event"]
    assert {"process", "parse", "scorecard", "metrics", "drift"} <= set(us)
    assert any(k.startswith("detector:") for k in us)
    assert all(v["median"] > 0 for k, v in us.items() if k != "drift")
    assert 0.9 <= result["fast_parse_share"] <= 1.0
    assert "| **sum of the parts** |" in breakdown.markdown(result)


def test_engine_and_naive_agree_on_a_hit_and_a_miss() -> None:
    rows = pattern_table()
    naive, engine = NaiveMatcher(rows), EngineMatcher()
    text = "You should buy TSLA now. Mail me at jane.doe@example.com about ERR_CONN_RESET."
    keys = {k for k, _, _ in engine.scan(text)}
    assert {"policy/financial_advice/you_should_trade", "pii/email"} <= keys
    assert keys == {k for k, _, _ in naive.scan(text)}
    assert engine.scan("Nothing to see here.") == naive.scan("Nothing to see here.") == []


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    server = FaultServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_economy_counts_the_format_fallback_and_server_usage(fault: FaultServer) -> None:
    """Through the counting proxy: the json_schema request rejected with HTTP 500, then
    the accepted request with the server's usage, attributed to the metric and turn."""
    fault.push(status(500, body="response_format json_schema is not supported"))
    fault.push(ok(usage=(321, 45)), ok(usage=(300, 40)))
    events = detectors.load_events(2)
    proxy = CountingProxy(fault.base_url)
    try:
        rows = asyncio.run(
            economy.judge_turns(events, proxy, ("answer_relevance", "citation_coverage"), 64, False)
        )
    finally:
        proxy.close()
    first = next(r for r in rows if r["turn"] == 0 and r["metric"] == "answer_relevance")
    assert (first["requests"], first["rejected_format"], first["ok"]) == (2, 1, 1)
    assert (first["prompt_tokens"], first["completion_tokens"]) == (321, 45)
    coverage = [r for r in rows if r["metric"] == "citation_coverage"]
    assert all(r["requests"] == 0 for r in coverage)  # no judge call
    summary = economy.summarise(rows, len(events))
    assert summary["totals"]["requests"] == 3 and summary["totals"]["rejected_format"] == 1
    assert summary["requests"]["max"] == 2 and summary["prompt_tokens"]["min"] == 300
