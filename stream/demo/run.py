"""`ragpulse demo`: embedded broker + bundled traffic + the real sidecar, nothing mocked.

Starts the Tansu broker on a free loopback port, replays the seeded traffic sample
at a steady rate (switching to a degraded phase after `degrade_after` seconds: a new
prompt_version that refuses more, blames its training cutoff and invents identifiers),
runs the same engine (`build_sidecar`) as `ragpulse run` against it, and prints a live summary.

The traffic carries golden/canary replays (:mod:`stream.demo.golden`) with a reference, so
with the embedded judge's default metrics the demo also runs ``answer_correctness_analytic``
and, when ``judge.compound.weights`` is empty, uses :data:`DEMO_COMPOUND_WEIGHTS`
(:func:`demo_settings`): the reference-based series and dashboard panels get data. A
config that sets either keeps its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from typing import TextIO

from aiokafka import AIOKafkaProducer

from exporters import PromFamilies
from monitors.judges.settings import default_metrics
from stream.contract.sections import Component
from stream.demo.broker import EmbeddedBroker
from stream.demo.traffic import generate
from stream.runtime.components import build_detectors
from stream.runtime.factory import build_sidecar
from stream.runtime.kafka_config import aiokafka_kwargs, ensure_topics
from stream.runtime.settings import Settings

__all__ = ["DEMO_COMPOUND_WEIGHTS", "demo_settings", "run_demo"]

log = logging.getLogger(__name__)

#: the demo's compound score (judge.compound.weights) when the config sets none: the
#: weights `ragpulse weights fit` wrote from TruthfulQA's labelled answers with the embedded
#: judge (bench/results/truthfulqa_weights.json; answer_relevance points the wrong way there
#: and gets 0). It needs every weighted score, so it is computed on the judged canary turns
DEMO_COMPOUND_WEIGHTS = {"answer_correctness": 1.0, "answer_relevance": 0.0}
DEMO_EXTRA_METRICS = ("answer_correctness_analytic",)


#: the demo's judge-canary round (judge.health.canaries.interval_s) when the config sets
#: none: a round every 40 s instead of 300 s, so a short demo shows the judge-health panels
DEMO_CANARY_INTERVAL_S = 40.0


def demo_settings(settings: Settings) -> tuple[Settings, list[str]]:
    """The settings the demo runs with, and what it changed: a judge-canary round every
    :data:`DEMO_CANARY_INTERVAL_S` unless configured; with the embedded judge's default
    metrics, those plus :data:`DEMO_EXTRA_METRICS`, and the compound weights
    :data:`DEMO_COMPOUND_WEIGHTS` when none are configured."""
    settings, changed = _demo_canaries(settings)
    judge = settings.judge
    if judge.backend.type != "embedded" or judge.metric_names() != default_metrics("embedded"):
        return settings, changed
    update: dict[str, object] = {
        "metrics": [*judge.metrics, *(Component(type=m) for m in DEMO_EXTRA_METRICS)]
    }
    changed.append(f"judge.metrics += {', '.join(DEMO_EXTRA_METRICS)}")
    if not judge.compound.weights:
        update["compound"] = judge.compound.model_copy(
            update={"weights": dict(DEMO_COMPOUND_WEIGHTS)}
        )
        changed.append(f"judge.compound.weights = {DEMO_COMPOUND_WEIGHTS}")
    return settings.model_copy(update={"judge": judge.model_copy(update=update)}), changed


def _demo_canaries(settings: Settings) -> tuple[Settings, list[str]]:
    canaries = settings.judge.health.canaries
    if "interval_s" in canaries.model_fields_set:
        return settings, []
    health = settings.judge.health.model_copy(
        update={"canaries": canaries.model_copy(update={"interval_s": DEMO_CANARY_INTERVAL_S})}
    )
    judge = settings.judge.model_copy(update={"health": health})
    changed = [f"judge.health.canaries.interval_s = {DEMO_CANARY_INTERVAL_S:g}"]
    return settings.model_copy(update={"judge": judge}), changed


async def _replay(settings: Settings, rate: float, degrade_after: float, seed: int) -> None:
    producer = AIOKafkaProducer(**aiokafka_kwargs(settings.kafka), linger_ms=5)
    await producer.start()
    started = time.monotonic()
    index, sent, phase = 0, 0, "baseline"
    try:
        while True:
            if phase == "baseline" and time.monotonic() - started >= degrade_after:
                phase = "degraded"
                print(f"demo: switching traffic to the degraded phase after {degrade_after:.0f}s")
            for item in generate(50, seed=seed, phase=phase, start_index=index):  # type: ignore[arg-type]
                await producer.send(settings.kafka.input_topic, item.raw, key=item.key)
                sent += 1
                delay = started + sent / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            index += 50
    finally:
        with contextlib.suppress(Exception):
            await producer.stop()


_SHOWN_METRICS = ("faithfulness", "answer_relevance", "context_relevance")


def _totals(metrics: PromFamilies, detectors: list[str]) -> tuple[float, str]:
    value = metrics.registry.get_sample_value
    consumed = value("ragpulse_events_total", {"outcome": "consumed"}) or 0.0
    dlq = value("ragpulse_events_total", {"outcome": "dead_lettered"}) or 0.0
    per_detector = dict.fromkeys(detectors, 0.0)
    for family in metrics.detector_hits.collect():
        for sample in family.samples:
            name = sample.labels.get("detector", "")
            if sample.name.endswith("_total") and name in per_detector:
                per_detector[name] += sample.value
    hits = " ".join(f"{k}={v:.0f}" for k, v in per_detector.items())
    up = sorted(
        s.labels["metric"]
        for family in metrics.drift_alarm.collect()
        for s in family.samples
        if s.value == 1
    )
    alarms = f" | drift alarms up: {', '.join(up)}" if up else ""
    judged = sum(
        s.value
        for family in metrics.judge_requests.collect()
        for s in family.samples
        if s.name.endswith("_total") and s.labels.get("outcome") == "ok"
    )
    means = {
        s.labels["metric"]: s.value
        for family in metrics.metric_mean.collect()
        for s in family.samples
        if s.labels.get("window") == "5m" and s.labels["metric"] in _SHOWN_METRICS
    }
    scores = " ".join(f"{k}={v:.2f}" for k, v in sorted(means.items()))
    judge = f" | judge: {judged:.0f} scores {scores}" if judged else ""
    return consumed, f"consumed={consumed:.0f} dlq={dlq:.0f} | hits: {hits}{judge}{alarms}"


async def _report(metrics: PromFamilies, detectors: list[str], out: TextIO) -> None:
    started, last = time.monotonic(), 0.0
    while True:
        await asyncio.sleep(5.0)
        consumed, totals = _totals(metrics, detectors)
        rate, last = (consumed - last) / 5.0, consumed
        print(
            f"[{time.monotonic() - started:5.0f}s] {rate:6.1f} ev/s  {totals}", file=out, flush=True
        )


async def run_demo(
    settings: Settings,
    duration: float | None = None,
    rate: float = 25.0,
    degrade_after: float = 90.0,
    seed: int = 7,
) -> int:
    build_detectors(settings)  # a bad detector config fails before anything starts
    settings, changed = demo_settings(settings)
    with EmbeddedBroker() as broker:
        settings = settings.model_copy(
            update={
                "kafka": settings.kafka.model_copy(
                    update={"bootstrap_servers": broker.bootstrap_servers}
                )
            }
        )
        await ensure_topics(settings.kafka)
        metrics = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
        sidecar = build_sidecar(settings, metrics)
        stop = asyncio.Event()
        if duration:
            asyncio.get_running_loop().call_later(duration, stop.set)
        names = [d.name for d in sidecar.pipeline.detectors]
        if changed:
            print(f"demo: settings for the demo: {'; '.join(changed)}")
        print(f"demo: embedded Kafka-protocol broker on {broker.bootstrap_servers}")
        print(f"demo: replaying traffic into '{settings.kafka.input_topic}' at {rate:g} events/s")
        if duration and duration <= degrade_after:
            print(
                f"demo: the degraded version starts after {degrade_after:g}s and this run stops"
                f" at {duration:g}s: no regression to see (--duration 150, or a smaller"
                " --degrade-after, shows one)"
            )
        else:
            print(f"demo: the degraded version starts after {degrade_after:g}s")
        print(
            f"demo: metrics at http://127.0.0.1:{settings.server.port}/metrics (Ctrl-C stops)",
            flush=True,  # the lines above too: a log file sees them at start, not later
        )
        tasks = [
            asyncio.create_task(_replay(settings, rate, degrade_after, seed)),
            asyncio.create_task(_report(metrics, names, sys.stdout)),
        ]
        try:
            code = await sidecar.run(stop)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        print(f"demo: final totals: {_totals(metrics, names)[1]}")
        return code
