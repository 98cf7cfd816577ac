"""One throughput stage in its own process (pinned to one CPU), printing one JSON line.

    python -m bench.perf.stages --stage raw|json|pipeline|faust-noop --bootstrap H:P
        --topic T --n N [--warmup W] [--engine aiokafka|faust] [--judge none|embedded]
        [--cpu C]

Events/s is counted over the N events handled after the first W (start-up, group join,
warm-up and shutdown excluded; W = 0: from the first batch); `cpu_s` is this process's CPU
time over the same span. The warm-up matters for ragpulse: its detectors compile a
pattern the first time it matches, which costs about 0.35 s of CPU over the first ~4,000
bundled events; a sidecar pays that once, not per event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Clock:
    """First-to-Nth timing; `done` is set when N events were handled."""

    def __init__(self, n: int, warmup: int = 0) -> None:
        self.n = n
        self.warmup = warmup
        self.started = False
        self.count = 0
        self.first = 0
        self.t0 = self.c0 = 0.0
        self.t1 = self.c1 = 0.0
        self.done = asyncio.Event()

    def tick(self, k: int = 1) -> None:
        # the clock starts with the first batch in hand after `warmup` events were handled
        if not self.started and self.count + k > self.warmup:
            self.started = True
            self.t0, self.c0 = time.perf_counter(), _cpu()
            self.first = self.count + k
        self.count += k
        if self.count >= self.warmup + self.n and not self.done.is_set():
            self.t1, self.c1 = time.perf_counter(), _cpu()
            self.done.set()

    def result(self) -> dict[str, Any]:
        secs = self.t1 - self.t0
        cpu = self.c1 - self.c0
        timed = self.count - self.first  # events handled after the clock started
        return {
            "events": self.count,
            "timed_events": timed,
            "seconds": secs,
            "cpu_s": cpu,
            "events_per_s": timed / secs if secs else 0.0,
            "events_per_cpu_s": timed / cpu if cpu else 0.0,
        }


async def raw(bootstrap: str, topic: str, n: int, parse: bool, warmup: int = 0) -> dict[str, Any]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    clock = Clock(n, warmup)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        loads = json.loads
        while not clock.done.is_set():
            batch = await consumer.getmany(timeout_ms=1000, max_records=1000)
            for records in batch.values():
                if parse:
                    for rec in records:
                        try:  # noqa: SIM105 - cheaper than suppress() per message
                            loads(rec.value)
                        except ValueError:
                            pass
                clock.tick(len(records))
    finally:
        await consumer.stop()
    return clock.result()


async def pipeline(
    bootstrap: str, topic: str, n: int, engine: str, judge: str, warmup: int = 0
) -> dict[str, Any]:
    from exporters import PromFamilies
    from stream.demo import free_port
    from stream.runtime.factory import build_sidecar
    from stream.runtime.settings import load_settings

    t = uuid.uuid4().hex[:8]
    judge_cfg: dict[str, Any] = {"type": judge}
    settings = load_settings(
        engine=engine,
        kafka={
            "bootstrap_servers": bootstrap,
            "input_topic": topic,
            "scores_topic": f"bench.scores-{t}",
            "dlq_topic": f"bench.dlq-{t}",
            "alarms_topic": f"bench.alarms-{t}",
            "state_topic": f"bench.state-{t}",
            "observations_topic": f"bench.obs-{t}",
            "group_id": f"bench-{t}",
        },
        server={"host": "127.0.0.1", "port": free_port()},
        judge=judge_cfg,
        sampling={"rate": 0.01},
    )
    metrics = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
    sidecar = build_sidecar(settings, metrics)
    clock = Clock(n, warmup)
    process = sidecar.pipeline.process

    def counted(raw: bytes | str | None) -> Any:
        result = process(raw)
        clock.tick()
        return result

    sidecar.pipeline.process = counted  # type: ignore[method-assign]
    stop = asyncio.Event()
    task = asyncio.create_task(sidecar.run(stop, install_signals=False))
    waiter = asyncio.create_task(clock.done.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        raise RuntimeError(f"sidecar ended early: {task.result()}")
    out = clock.result()
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name in ("ragpulse_sampled_total", "ragpulse_dropped_total",
                               "ragpulse_observations_published_total",
                               "ragpulse_observation_bytes_total"):  # fmt: skip
                key = sample.name.removeprefix("ragpulse_").removesuffix("_total")
                out[key] = out.get(key, 0.0) + sample.value
    stop.set()
    await asyncio.wait_for(task, 60)
    return out


async def run_noop_agent(
    bootstrap: str,
    topic: str,
    clock: Clock,
    on_event: Callable[[], None] | None = None,
    limit_s: float = 900.0,
) -> None:
    """Stage (e): a no-op faust agent on `topic` until `clock` is done (`on_event` is called
    before each tick; `bench.perf.noop_gaps` stamps events with it)."""
    import tempfile

    import faust

    app = faust.App(
        f"bench-noop-{uuid.uuid4().hex[:8]}",
        broker=f"kafka://{bootstrap}",
        value_serializer="raw",
        key_serializer="raw",
        web_enabled=False,
        store="memory://",
        topic_allow_declare=False,
        consumer_auto_offset_reset="earliest",
        datadir=tempfile.mkdtemp(prefix="bench-faust-"),
    )
    source = app.topic(topic, key_type=bytes, value_type=bytes)

    async def noop(stream: Any) -> None:
        async for _event in stream.events():
            if on_event is not None:
                on_event()
            clock.tick()

    app.agent(source, name="noop")(noop)
    await app.start()
    try:
        await asyncio.wait_for(clock.done.wait(), limit_s)
    finally:
        await app.stop()


async def faust_noop(bootstrap: str, topic: str, n: int, warmup: int = 0) -> dict[str, Any]:
    clock = Clock(n, warmup)
    await run_noop_agent(bootstrap, topic, clock)
    return clock.result()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--stage", required=True, choices=("raw", "json", "pipeline", "faust-noop"))
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--warmup", type=int, default=0, help="events handled before the clock")
    p.add_argument("--engine", default="aiokafka")
    p.add_argument("--judge", default="none")
    p.add_argument("--cpu", type=int, default=None)
    a = p.parse_args(argv)
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    import logging

    logging.basicConfig(level=logging.WARNING)
    if a.stage in ("raw", "json"):
        out = asyncio.run(raw(a.bootstrap, a.topic, a.n, a.stage == "json", a.warmup))
    elif a.stage == "pipeline":
        out = asyncio.run(pipeline(a.bootstrap, a.topic, a.n, a.engine, a.judge, a.warmup))
    else:
        out = asyncio.run(faust_noop(a.bootstrap, a.topic, a.n, a.warmup))
    out["rss_mb_end"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
