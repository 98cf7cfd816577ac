"""Produce -> /metrics-visible and produce -> rag.scores latency (BENCHMARKS.md `latency`).

    python -m bench latency [--runs 5] [--rates 200,1000,5000] [--seconds 10] [--smoke]

One `ragpulse run` child (engine from `--engine`, default the settings default; judges
off) pinned to CPU 1 on a fresh embedded broker. Per offered rate, the events are
produced paced (10 ms ticks) for `--seconds`; for each event the producer notes the
wall time just before `send`. *rag.scores*: a tailing consumer notes when each event's
scorecard arrives (by event id). */metrics*: `ragpulse_events_total{outcome="consumed"}`
is scraped every 50 ms; the k-th event of the phase is visible at the first scrape that
counts k events (resolution 50 ms; order across partitions is approximate). Events not
seen within `--drain` seconds after the last send count as infinitely late.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from bench.perf.kafkabench import create_topic, dataset, save_perf
from bench.perf.mdsection import machine, replace_section
from bench.perf.sidecarproc import BenchSidecar, paced_produce
from stream.contract.events import InvalidEvent, parse_event
from stream.demo import EmbeddedBroker

__all__ = ["main", "run"]

NAME = "latency"
TOPIC = "lat.in"


def _pct(values: list[float], q: float, total: int) -> float:
    """q-quantile with missing events (total - len(values)) counted as infinitely late."""
    if total == 0:
        return float("nan")
    k = min(total - 1, int(q * total))
    ordered = sorted(values)
    return ordered[k] if k < len(ordered) else float("inf")


def _event_id(value: bytes) -> str | None:
    """The event id of a message that gets a scorecard (None: dead-lettered by design)."""
    try:
        return parse_event(value).event_id
    except InvalidEvent:
        return None


async def _phase(
    sc: BenchSidecar, bs: str, messages: list[tuple[bytes | None, bytes]], rate: float,
    drain: float,
) -> dict[str, Any]:  # fmt: skip
    ids = [_event_id(v) for _, v in messages]
    sent: list[float] = [0.0] * len(messages)
    arrived: dict[str, float] = {}
    scrapes: list[tuple[float, float]] = []
    base = await asyncio.to_thread(sc.consumed)
    consumer = AIOKafkaConsumer(bootstrap_servers=bs, enable_auto_commit=False, fetch_max_wait_ms=5)
    await consumer.start()
    tps = [TopicPartition(sc.scores_topic, p) for p in range(4)]
    consumer.assign(tps)
    await consumer.seek_to_end(*tps)
    for tp in tps:
        await consumer.position(tp)
    stop = asyncio.Event()

    async def tail() -> None:
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=50)
            now = time.time()
            for recs in batch.values():
                for r in recs:
                    card = json.loads(r.value)
                    if card.get("update") is None:
                        arrived.setdefault(card["event_id"], now)

    async def scrape() -> None:
        while not stop.is_set():
            value = await asyncio.to_thread(sc.consumed)
            scrapes.append((time.time(), value - base))
            await asyncio.sleep(0.05)

    def on_sent(i: int, t: float) -> None:
        sent[i] = t

    tasks = [asyncio.create_task(tail()), asyncio.create_task(scrape())]
    achieved = await paced_produce(bs, TOPIC, messages, rate, on_sent)
    deadline = time.time() + drain
    while time.time() < deadline and (not scrapes or scrapes[-1][1] < len(messages)):  # noqa: ASYNC110
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*tasks)
    await consumer.stop()
    scored = [(i, e) for i, e in enumerate(ids) if e is not None]
    to_scores = [arrived[e] - sent[i] for i, e in scored if e in arrived]
    visible: list[float] = []
    j = 0
    for k in range(len(messages)):
        while j < len(scrapes) and scrapes[j][1] < k + 1:
            j += 1
        if j == len(scrapes):
            break
        visible.append(scrapes[j][0] - sent[k])
    return {
        "offered_per_s": rate,
        "achieved_per_s": achieved,
        "events": len(messages),
        "scores_p50_s": _pct(to_scores, 0.5, len(scored)),
        "scores_p99_s": _pct(to_scores, 0.99, len(scored)),
        "scores_missing": len(scored) - len(to_scores),
        "metrics_p50_s": _pct(visible, 0.5, len(messages)),
        "metrics_p99_s": _pct(visible, 0.99, len(messages)),
        "metrics_missing": len(messages) - len(visible),
    }


def run(
    runs: int, rates: list[float], seconds: float, drain: float, engine: str | None
) -> dict[str, Any]:
    per_run: list[dict[str, Any]] = []
    env = {"RAGPULSE_ENGINE": engine} if engine else {}
    for i in range(runs):
        with EmbeddedBroker() as broker:
            bs = broker.bootstrap_servers
            asyncio.run(create_topic(bs, TOPIC, 4))
            total = int(sum(r * seconds for r in rates))
            messages = list(dataset(total))
            sc = BenchSidecar(bs, TOPIC, cpu=1, **env).start()
            try:
                sc.wait_ready()
                phases, start = [], 0
                for rate in rates:
                    n = int(rate * seconds)
                    ph = asyncio.run(_phase(sc, bs, messages[start : start + n], rate, drain))
                    start += n
                    ph["loadavg"] = list(os.getloadavg())
                    print(f"  run {i + 1} {rate:,.0f}/s: scores p50 {ph['scores_p50_s']:.3f}s "
                          f"p99 {ph['scores_p99_s']:.3f}s; metrics p50 {ph['metrics_p50_s']:.3f}s "
                          f"p99 {ph['metrics_p99_s']:.3f}s; load {ph['loadavg'][0]:.1f}",
                          flush=True)  # fmt: skip
                    phases.append(ph)
            finally:
                sc.stop()
            per_run.append({"phases": phases})
    summary: dict[str, Any] = {}
    for j, rate in enumerate(rates):
        summary[str(int(rate))] = {
            key: _spread([r["phases"][j][key] for r in per_run])
            for key in (
                "achieved_per_s", "scores_p50_s", "scores_p99_s", "metrics_p50_s",
                "metrics_p99_s", "scores_missing",
            )
        }  # fmt: skip
        summary[str(int(rate))]["loadavg_1m"] = _spread(
            [r["phases"][j]["loadavg"][0] for r in per_run]
        )
    return {"runs": runs, "seconds": seconds, "drain": drain, "valid_only": True,
            "engine": engine or "default",
            "rates": rates, "per_run": per_run, "summary": summary}  # fmt: skip


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _t(s: dict[str, float]) -> str:
    def one(x: float) -> str:
        return "∞ (not all seen)" if x == float("inf") else f"{x:.2f}"

    return f"{one(s['min'])} / **{one(s['median'])}** / {one(s['max'])}"


def markdown(result: dict[str, Any], smoke: bool) -> str:
    m = result.get("machine") or machine()
    rows = []
    for rate, s in result["summary"].items():
        rows.append(
            f"| {int(rate):,} | {s['achieved_per_s']['median']:,.0f} | {_t(s['metrics_p50_s'])} | "
            f"{_t(s['metrics_p99_s'])} | {_t(s['scores_p50_s'])} | {_t(s['scores_p99_s'])} | "
            f"{s['loadavg_1m']['median']:.1f} |"
        )
    seen = []
    for rate, s in result["summary"].items():
        n = int(float(rate) * result["seconds"])
        missing = s["scores_missing"]["median"]
        if missing:
            seen.append(
                f"at {int(rate):,}/s, {missing:,.0f} of {n:,} scorecards (median) had not "
                f"arrived {result.get('drain', 0):.0f} s after the last send"
            )
    short = [
        f"{int(rate):,}/s reached {s['achieved_per_s']['median']:,.0f}/s"
        for rate, s in result["summary"].items()
        if s["achieved_per_s"]["median"] < 0.95 * float(rate)
    ]
    if short:
        seen.append(
            "the paced producer (unpinned, sharing the other core with the broker) fell short "
            "of the offered rate: " + ", ".join(short)
        )
    note = (
        "When the offered rate exceeds what the sidecar sustains on its core, a backlog "
        "builds and the late events count as infinitely late: "
        + "; ".join(seen)
        + "."
        + (
            ""
            if result.get("valid_only")
            else " (This run counted the ~1 % malformed events, dead-lettered by design, "
            "as missing scorecards too, and as infinitely late in the rag.scores columns.)"
        )
        if seen
        else ""
    )
    return "\n".join(
        [
            "## Latency: produce → /metrics and produce → rag.scores",
            "",
            f"`python -m bench latency --runs {result['runs']}` (code: `bench/perf/latency.py`)."
            + (" **Smoke run: not a measurement.**" if smoke else ""),
            f"Machine: {m['cpu']}, {m['cores']} cores; {m['date']}; commit {m['commit']}. "
            f"One `ragpulse run` (engine: {result['engine']}, judges off) pinned to CPU 1; "
            f"{result['seconds']:.0f} s per offered rate; seconds, min / **median** / max "
            f"over {result['runs']} runs. /metrics resolution is the 50 ms scrape period.",
            "",
            "| offered events/s | produced/s | /metrics p50 | /metrics p99 | rag.scores p50 | "
            "rag.scores p99 | load 1m |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            note,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench latency")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rates", default="200,1000,5000")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--drain", type=float, default=30.0)
    p.add_argument("--engine", default=None)
    p.add_argument("--smoke", action="store_true")
    a = p.parse_args(argv)
    rates = [float(r) for r in a.rates.split(",")]
    if a.smoke:
        a.runs, a.seconds, a.drain, rates = 1, 1.0, 10.0, [200.0]
    result = run(max(1, a.runs), rates, a.seconds, a.drain, a.engine)
    result["smoke"] = a.smoke
    save_perf(NAME, result)
    replace_section(NAME, markdown(result, a.smoke))
    return 0
