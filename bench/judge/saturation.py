"""Judge-path saturation: achieved judge calls/s against the ceiling C x 1/L.

Run from the repo root::

    python -m bench.judge.saturation [--latency 0.1] [--concurrency 1 4 16] [--seconds 5]

The JudgeService (the sidecar's judge path: bounded queue, its own thread and event loop)
runs the `answer_relevance` metric with the OpenAI judge against the loopback
chat-completions test server (tests/monitors/judges/fault_server.py), which answers every
request after a fixed latency L. For each concurrency C (judge.concurrency and the
client's connection limit both C) the queue is kept full for `--seconds` and the achieved
rate of completed judge calls is compared to the ceiling C / L. Writes
``bench/results/judge_saturation.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from monitors.judges.openai import OpenAIJudge
from monitors.metrics.base import create_metric
from stream.contract.events import parse_event
from stream.demo import generate
from stream.runtime.judging import JudgeResult, JudgeService
from tests.monitors.judges.fault_server import FaultServer, slow

OUT = Path(__file__).resolve().parents[1] / "results" / "judge_saturation.json"


def run_one(
    server: FaultServer, concurrency: int, latency: float, seconds: float
) -> dict[str, Any]:
    judge = OpenAIJudge(
        model="bench", base_url=server.base_url, timeout_s=latency * 20 + 5, concurrency=concurrency
    )
    svc = JudgeService(judge, [create_metric("answer_relevance")], 4 * concurrency, concurrency)
    events = [parse_event(g.raw) for g in generate(200, malformed_rate=0.0)]
    done: list[float] = []
    lock = threading.Lock()

    def on_done(result: JudgeResult) -> None:
        with lock:
            done.append(time.monotonic())

    before = len(server.requests)
    started = time.monotonic()
    n = 0
    while time.monotonic() - started < seconds:
        if not svc.submit(events[n % len(events)], on_done):
            time.sleep(0.001)  # queue full: the judge is saturated
            continue
        n += 1
    svc.close(latency * 4 + 5)
    with lock:
        finished = [t for t in done if t <= started + seconds]
    achieved = len(finished) / seconds
    ceiling = concurrency / latency
    return {
        "concurrency": concurrency,
        "latency_s": latency,
        "seconds": seconds,
        "calls": len(server.requests) - before,
        "completed_in_window": len(finished),
        "achieved_calls_per_s": round(achieved, 2),
        "ceiling_calls_per_s": round(ceiling, 2),
        "ratio": round(achieved / ceiling, 3),
        "max_in_flight_at_server": server.max_in_flight,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    rows = []
    for c in args.concurrency:
        server = FaultServer().start()
        server.default = slow(args.latency)
        try:
            rows.append(run_one(server, c, args.latency, args.seconds))
        finally:
            server.stop()
        print(json.dumps(rows[-1]))
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "command": "python -m bench.judge.saturation",
        "rows": rows,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
