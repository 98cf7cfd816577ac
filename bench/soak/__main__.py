"""Soak: the real sidecar at a fixed rate for a long time; does anything grow?

    python -m bench.soak [--duration 600] [--rate 200] [--every 5] [--engine faust]

Starts an embedded broker and `ragpulse run` (a real process, judge off: the detector
path), produces the bundled traffic at `--rate` events/s for `--duration` seconds and
every `--every` seconds records the sidecar's RSS and open file descriptors (/proc),
consumer lag (sum of `ragpulse_consumer_lag`), event-loop lag
(`ragpulse_event_loop_lag_seconds`) and the events consumed. Writes
bench/results/soak.json and bench/results/soak.png; the growth verdict is the
least-squares slope over the second half of the run (after warm-up).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.soak.drive import Sidecar, produce_at_rate
from bench.soak.report import plot, verdict
from stream.demo import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[2]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def _sample(
    sc: Sidecar, t0: float, every: float, stop: asyncio.Event
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while not stop.is_set():
        m = await asyncio.to_thread(sc.metrics)
        rows.append(
            {
                "t_s": round(time.monotonic() - t0, 2),
                "rss_mb": round(_rss_mb(sc.pid), 2),
                "fds": _fds(sc.pid),
                "consumer_lag": sum(v for (n, _), v in m.items() if n == "ragpulse_consumer_lag"),
                "loop_lag_s": m.get(("ragpulse_event_loop_lag_seconds", ()), float("nan")),
                "consumed": m.get(("ragpulse_events_total", (("outcome", "consumed"),)), 0.0),
                "load1": os.getloadavg()[0],
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
    return rows


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    with EmbeddedBroker() as broker:
        extra = {"RAGPULSE_ENGINE": args.engine} if args.engine else {}
        sc = Sidecar(broker.bootstrap_servers, extra).start()
        try:
            stop = asyncio.Event()
            t0 = time.monotonic()
            sampler = asyncio.create_task(_sample(sc, t0, args.every, stop))
            produced = await produce_at_rate(
                broker.bootstrap_servers, sc.topics.input, args.rate, args.duration
            )
            await asyncio.sleep(args.every)  # one more sample after the last event
            stop.set()
            rows = await sampler
            code = sc.terminate()
        finally:
            sc.kill()
    return {"produced": produced, "rows": rows, "exit_code": code}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    p.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    p.add_argument("--rate", type=float, default=200.0, help="events per second (default 200)")
    p.add_argument("--every", type=float, default=5.0, help="sampling period in seconds")
    p.add_argument("--engine", default=None, help="sidecar engine (default: the sidecar's)")
    p.add_argument("--json", default=str(ROOT / "bench/results/soak.json"))
    p.add_argument("--png", default=str(ROOT / "bench/results/soak.png"))
    args = p.parse_args(argv)
    started = datetime.now(UTC)
    result = asyncio.run(soak(args))
    rows = result["rows"]
    summary = {
        "date": started.isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "duration_s": args.duration,
        "rate_eps": args.rate,
        "engine": args.engine or "default",
        "produced": result["produced"],
        "consumed": rows[-1]["consumed"] if rows else 0,
        "exit_code": result["exit_code"],
        "verdict": verdict(rows),
        "rows": rows,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    plot(rows, args.png, f"soak: {args.rate:.0f} ev/s for {args.duration:.0f} s")
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
