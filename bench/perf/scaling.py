"""Consumer-group scaling: 1, 2 and 4 sidecars on a 4-partition topic (`scaling`).

    python -m bench scaling [--runs 5] [--events 15000] [--replicas 1,2,4] [--smoke]

Per run: a fresh embedded broker and `--events` generated events on a 4-partition topic;
per replica count, that many `ragpulse run` children (unpinned: the machine has what it
has) join one new consumer group and read the topic from the start. Throughput is the
group's steady rate: events consumed (summed over the children's /metrics) between the
moment all children are ready (partitions assigned) and the moment the topic is done.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from typing import Any

from bench.perf.kafkabench import produce, save_perf
from bench.perf.mdsection import machine, replace_section
from bench.perf.sidecarproc import BenchSidecar
from stream.demo import EmbeddedBroker

__all__ = ["main", "run"]

NAME = "scaling"
TOPIC = "scale.in"


def _group(bs: str, n: int, replicas: int, engine: str | None) -> dict[str, Any]:
    group = f"bench-scale-{uuid.uuid4().hex[:6]}"
    env = {"RAGPULSE_ENGINE": engine} if engine else {}
    cars = [BenchSidecar(bs, TOPIC, group, None, **env).start() for _ in range(replicas)]
    try:
        deadline = time.monotonic() + 180
        while not all(c.ready() for c in cars):
            if time.monotonic() > deadline:
                raise RuntimeError("sidecars not ready")
            time.sleep(0.2)
        t0, c0 = time.monotonic(), sum(max(c.consumed(), 0) for c in cars)
        total = c0
        while total < n and time.monotonic() - t0 < 600:
            time.sleep(0.25)
            total = sum(max(c.consumed(), 0) for c in cars)
        t1 = time.monotonic()
    finally:
        for c in cars:
            c.stop()
    timed = total - c0
    return {
        "replicas": replicas,
        "consumed_before_all_ready": c0,
        "timed_events": timed,
        "seconds": t1 - t0,
        "events_per_s": timed / (t1 - t0) if t1 > t0 else 0.0,
        "loadavg": list(os.getloadavg()),
    }


def run(runs: int, events: int, replicas: list[int], engine: str | None) -> dict[str, Any]:
    per_run: list[dict[str, Any]] = []
    for i in range(runs):
        with EmbeddedBroker() as broker:
            bs = broker.bootstrap_servers
            asyncio.run(produce(bs, TOPIC, events, partitions=4))
            groups = {}
            for k in replicas:
                g = _group(bs, events, k, engine)
                groups[str(k)] = g
                print(f"  run {i + 1} x{k}: {g['events_per_s']:,.0f}/s "
                      f"({g['consumed_before_all_ready']:.0f} before all ready) "
                      f"load {g['loadavg'][0]:.1f}", flush=True)  # fmt: skip
            one = groups[str(replicas[0])]["events_per_s"]
            for g in groups.values():
                g["speedup"] = g["events_per_s"] / one if one else 0.0
            per_run.append(groups)
    summary = {
        str(k): {
            key: _spread([r[str(k)][key] for r in per_run])
            for key in ("events_per_s", "speedup", "consumed_before_all_ready")
        }
        | {"loadavg_1m": _spread([r[str(k)]["loadavg"][0] for r in per_run])}
        for k in replicas
    }
    return {"runs": runs, "events": events, "engine": engine or "default",
            "per_run": per_run, "summary": summary}  # fmt: skip


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _f(s: dict[str, float], digits: int = 0) -> str:
    return f"{s['min']:,.{digits}f} / **{s['median']:,.{digits}f}** / {s['max']:,.{digits}f}"


def markdown(result: dict[str, Any], smoke: bool) -> str:
    m = machine()
    rows = [
        f"| {k} | {_f(s['events_per_s'])} | {_f(s['speedup'], 2)} | "
        f"{s['consumed_before_all_ready']['median']:,.0f} | {s['loadavg_1m']['median']:.1f} |"
        for k, s in result["summary"].items()
    ]
    return "\n".join(
        [
            "## Scaling: consumer group of 1, 2, 4 sidecars",
            "",
            f"`python -m bench scaling --runs {result['runs']}` (code: `bench/perf/scaling.py`)."
            + (" **Smoke run: not a measurement.**" if smoke else ""),
            f"Machine: {m['cpu']}, {m['cores']} cores; {m['date']}; commit {m['commit']}. "
            f"{result['events']:,} events on a 4-partition topic; N `ragpulse run` processes "
            f"(engine: {result['engine']}, judges off, unpinned) in one consumer group; rate "
            f"from all-ready to done, min / **median** / max over {result['runs']} runs.",
            "",
            "| sidecars | group events/s | speed-up vs 1 | consumed before all ready "
            "(median) | load 1m |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench scaling")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--events", type=int, default=15_000)
    p.add_argument("--replicas", default="1,2,4")
    p.add_argument("--engine", default=None)
    p.add_argument("--smoke", action="store_true")
    a = p.parse_args(argv)
    if a.smoke:
        a.runs, a.events = 1, 400
    replicas = [int(x) for x in a.replicas.split(",")]
    result = run(max(1, a.runs), a.events, replicas, a.engine)
    result["smoke"] = a.smoke
    save_perf(NAME, result)
    replace_section(NAME, markdown(result, a.smoke))
    return 0
