"""Shared parts of the judge-path tests: the real Pipeline + Sampler + JudgeService with the
OpenAI judge against the loopback fault server, fed the way the sidecar feeds them."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exporters.prometheus import PromFamilies
from monitors.judges.openai import OpenAIJudge
from monitors.metrics.base import create_metric
from stream.demo import generate
from stream.runtime.judging import JudgeResult, JudgeService
from stream.runtime.pipeline import Pipeline
from stream.runtime.sampler import Sampler, SamplerSettings
from stream.runtime.settings import Settings
from tests.monitors.judges.fault_server import FaultServer


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")


def raw_events(n: int, seed: int = 7) -> list[bytes]:
    """n valid events with distinct ids (the bundled traffic, ids renumbered)."""
    base = [g.raw for g in generate(min(n, 500), seed=seed, malformed_rate=0.0)]
    out = []
    for i in range(n):
        doc = json.loads(base[i % len(base)])
        doc["event_id"] = f"bp-{seed}-{i}"
        doc["conversation_id"] = f"conv-{seed}-{i}"
        out.append(json.dumps(doc).encode())
    return out


def openai_service(
    server: FaultServer,
    prom: PromFamilies,
    concurrency: int,
    queue_size: int,
    timeout_s: float = 5.0,
    **options: Any,
) -> JudgeService:
    """answer_relevance (its verdict is the fault server's default {score, justification})."""
    judge = OpenAIJudge(
        model="fault-judge",
        base_url=server.base_url,
        timeout_s=timeout_s,
        concurrency=concurrency,
        **options,
    )
    metric = create_metric("answer_relevance")
    return JudgeService(judge, [metric], queue_size, concurrency, prom)


def sampler_all() -> Sampler:
    """Every turn sampled at the base rate, no budget: only backpressure limits the judge."""
    settings = SamplerSettings.model_validate(
        {"rate": 1.0, "budget": {"calls_per_minute": None, "usd_per_hour": None}}
    )
    return Sampler(settings)


@dataclass
class Driver:
    """Feeds raw events through the pipeline and hands sampled ones to the judge service
    exactly like the sidecar (`stream.runtime.judge_bridge.JudgeBridge.submit`): never
    waits, counts refusals."""

    prom: PromFamilies
    service: JudgeService | None
    pipeline: Pipeline = field(init=False)
    busy_s: float = 0.0
    events: int = 0
    max_depth: int = 0
    results: list[JudgeResult] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        settings = Settings()
        svc = self.service
        sampler = sampler_all() if svc is not None else None
        pressure = svc.fill if svc is not None else None
        self.pipeline = Pipeline(settings, self.prom, sampler=sampler, pressure=pressure)

    def _done(self, result: JudgeResult) -> None:
        with self._lock:
            self.results.append(result)

    def feed(self, raw: bytes) -> None:
        started = time.perf_counter()
        result = self.pipeline.process(raw)
        svc = self.service
        if svc is not None and result.judge_event is not None:
            reason = result.sample_reason or "base"
            if not svc.submit(result.judge_event, self._done, reason):
                self.prom.dropped.labels("judge_backlog").inc()
        self.busy_s += time.perf_counter() - started
        self.events += 1
        if svc is not None:
            self.max_depth = max(self.max_depth, svc._pending)

    def run_paced(self, raws: list[bytes], rate: float, seconds: float) -> int:
        """Feed `raws` in order at `rate` events/s for `seconds`; returns how many were fed."""
        started = time.monotonic()
        n = 0
        while n < len(raws) and time.monotonic() - started < seconds:
            self.feed(raws[n])
            n += 1
            delay = started + n / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return n

    @property
    def throughput(self) -> float:
        """Detector-path capacity: events per second of processing (busy) time."""
        return self.events / self.busy_s if self.busy_s else 0.0


def value(prom: PromFamilies, name: str, labels: dict[str, str] | None = None) -> float:
    return prom.registry.get_sample_value(name, labels or {}) or 0.0
