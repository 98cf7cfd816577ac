"""Soak: the real sidecar at a fixed rate for a long time; does anything grow?

    python -m bench.soak [--duration 600] [--rate 200] [--every 5] [--engine faust]

Starts an embedded broker and `ragpulse run` (a real process, judge off: the detector
path), produces the bundled traffic at `--rate` events/s for `--duration` seconds and
every `--every` seconds records the sidecar's RSS and open file descriptors (/proc; every
`--smaps-every` seconds also where the RSS lives: main heap, anonymous maps, files),
consumer lag (sum of `ragpulse_consumer_lag`; the embedded broker's high watermark can sit
below its log end, so also `behind_producer`: events sent minus consumed), event-loop lag
(`ragpulse_event_loop_lag_seconds`) and the events consumed. Writes
bench/results/soak.json and bench/results/soak.png; the growth verdict is the
least-squares slope over the second half of the run (after warm-up), and for RSS also the
slope of its per-minute floor (the heap is trimmed every minute, so the samples are a
sawtooth whose peaks follow the work in flight). SIGINT / SIGTERM, or the sidecar exiting,
ends the run early; the samples so far are written, with ``stopped_early`` saying why.
With ``--control`` a bare aiokafka consumer (bench/soak/control.py) reads the same topic in
its own group with the sidecar's fetch settings; its lag (``control_lag``) is the broker's
share of the sidecar's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.perf.kafkabench import cpu_s as _cpu_s
from bench.soak.drive import Sidecar, produce_at_rate
from bench.soak.report import plot, snapshot_diffs, verdict
from bench.soak.smaps import regions
from stream.demo import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[2]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def _fetch_probe(bootstrap: str, topic: str, n: int = 2000) -> float:
    """Seconds to fetch the newest `n` records of `topic` with a fresh consumer: the
    broker's fetch cost on its own, to tell its slow-down from the sidecar's."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        consumer.assign(parts)
        ends = await consumer.end_offsets(parts)
        share = max(1, n // max(1, len(parts)))
        want = 0
        for tp in parts:
            consumer.seek(tp, max(0, ends[tp] - share))
            want += min(share, ends[tp])
        started, got = time.monotonic(), 0
        while got < want and time.monotonic() - started < 30:
            batch = await consumer.getmany(timeout_ms=1000, max_records=n)
            got += sum(len(v) for v in batch.values())
        return time.monotonic() - started
    finally:
        await consumer.stop()


async def _sample(
    sc: Sidecar,
    broker: EmbeddedBroker,
    t0: float,
    args: argparse.Namespace,
    stop: asyncio.Event,
    sent: list[int],
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    last_probe = last_snap = last_smaps = -1e9
    cpu0, consumed0 = _cpu_s(sc.pid), 0.0
    while not stop.is_set():
        try:
            row = await _row(sc, broker, t0, cpu0, consumed0)
        except OSError:  # /metrics or /proc gone: the sidecar exited, `_watch` ends the run
            if sc.proc is not None and sc.proc.poll() is not None:
                break
            raise
        now, cpu0, consumed0 = row["t_s"], row.pop("_cpu"), row["consumed"]
        row["produced"] = sent[0]
        row["behind_producer"] = sent[0] - int(row["consumed"])
        if now - last_probe >= args.probe_every:
            last_probe = now
            row["broker_fetch_s"] = round(
                await _fetch_probe(broker.bootstrap_servers, sc.topics.input), 4
            )
        if now - last_smaps >= args.smaps_every:  # where the RSS lives (bench/soak/smaps.py)
            last_smaps = now
            row.update(regions(sc.pid))
        if args.trace and now - last_snap >= args.trace_every:
            last_snap = now
            os.kill(sc.pid, signal.SIGUSR1)
        rows.append(row)
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), args.every)
    return rows


async def _row(
    sc: Sidecar, broker: EmbeddedBroker, t0: float, cpu0: float, consumed0: float
) -> dict[str, Any]:
    """One sample (``_cpu``: the sidecar's CPU seconds so far, for the next sample)."""
    m = await asyncio.to_thread(sc.metrics)
    now = time.monotonic() - t0
    consumed = m.get(("ragpulse_events_total", (("outcome", "consumed"),)), 0.0)
    cpu = _cpu_s(sc.pid)
    return {
        "t_s": round(now, 2),
        "rss_mb": round(_rss_mb(sc.pid), 2),
        "fds": _fds(sc.pid),
        "consumer_lag": sum(v for (n, _), v in m.items() if n == "ragpulse_consumer_lag"),
        "loop_lag_s": m.get(("ragpulse_event_loop_lag_seconds", ()), float("nan")),
        "consumed": consumed,
        "load1": os.getloadavg()[0],
        "cpu_us_per_event": round(1e6 * (cpu - cpu0) / max(1.0, consumed - consumed0), 1),
        "broker_rss_mb": round(_rss_mb(broker.pid), 2) if broker.pid else None,
        "broker_cpu_s": round(_cpu_s(broker.pid), 2) if broker.pid else None,
        "_cpu": cpu,
        **_control(sc),
    }


def _control(sc: Sidecar) -> dict[str, Any]:
    """The control consumer's latest lag and count (empty without ``--control``)."""
    path = getattr(sc, "control_out", None)
    if path is None:
        return {}
    try:
        got = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {"control_lag": float("nan"), "control_consumed": 0}
    return {"control_lag": got["lag"], "control_consumed": got["consumed"]}


def _start_control(sc: Sidecar, bootstrap: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    wait_ms = env.get("RAGPULSE_KAFKA__FETCH_MAX_WAIT_MS", "100")
    out = Path(str(sc.log)).with_suffix(".control.json")
    sc.control_out = out  # type: ignore[attr-defined]
    argv = [sys.executable, "-m", "bench.soak.control", bootstrap, sc.topics.input,
            f"{sc.topics.group}-control", wait_ms, str(out)]  # fmt: skip
    return subprocess.Popen(argv, cwd=ROOT)


async def _watch(sc: Sidecar, early: asyncio.Event, why: list[str]) -> None:
    """Set `early` when the sidecar process exits on its own."""
    while not early.is_set():
        if sc.proc is not None and sc.proc.poll() is not None:
            why.append(f"sidecar exited with {sc.proc.returncode}")
            early.set()
        await asyncio.sleep(1.0)


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    """The run; SIGINT or SIGTERM (or the sidecar exiting) ends it early, and the samples
    so far are still written ("stopped_early" says why)."""
    with EmbeddedBroker() as broker:
        extra = {"RAGPULSE_ENGINE": args.engine} if args.engine else {}
        extra.update(kv.split("=", 1) for kv in args.env)
        trace = Path(args.trace) if args.trace else None
        sc = Sidecar(broker.bootstrap_servers, extra, trace, args.trace_frames).start()
        control = _start_control(sc, broker.bootstrap_servers, extra) if args.control else None
        early, why = asyncio.Event(), []
        loop = asyncio.get_running_loop()

        def interrupted(sig: signal.Signals) -> None:
            why.append(sig.name)
            early.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, interrupted, sig)
        watcher = asyncio.create_task(_watch(sc, early, why))
        try:
            stop = asyncio.Event()
            t0 = time.monotonic()
            sent = [0]  # the producer's count so far: lag that needs no broker watermark
            sampler = asyncio.create_task(_sample(sc, broker, t0, args, stop, sent))
            produced = await produce_at_rate(
                broker.bootstrap_servers,
                sc.topics.input,
                args.rate,
                args.duration,
                early,
                sent,
                tick=args.burst_every,
                batch_bytes=args.batch_bytes,
            )
            await asyncio.sleep(args.every)  # one more sample after the last event
            stop.set()
            rows = await sampler
            code = sc.terminate()
        finally:
            early.set()
            await watcher
            if control is not None:
                control.terminate()
                control.wait(30)
            sc.kill()
    return {"produced": produced, "rows": rows, "exit_code": code, "stopped_early": why or None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    p.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    p.add_argument("--rate", type=float, default=200.0, help="events per second (default 200)")
    p.add_argument("--every", type=float, default=5.0, help="sampling period in seconds")
    p.add_argument("--engine", default=None, help="sidecar engine (default: the sidecar's)")
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the sidecar")
    p.add_argument(
        "--burst-every",
        type=float,
        default=0.1,
        help="seconds between the producer's bursts (about one record batch per partition "
        "each); the embedded broker slows as the batches it holds add up (docs/reliability.md)",
    )
    p.add_argument(
        "--batch-bytes",
        type=int,
        default=16384,
        help="the producer's max record batch size (aiokafka's default 16 KiB; the "
        "session-9 soak used 1 MiB with --burst-every 1)",
    )
    p.add_argument("--probe-every", type=float, default=60.0, help="broker fetch probe period")
    p.add_argument(
        "--smaps-every", type=float, default=60.0, help="seconds between /proc smaps samples"
    )
    p.add_argument("--control", action="store_true", help="run a bare control consumer")
    p.add_argument("--trace", default=None, help="folder: tracemalloc snapshots (diagnostic)")
    p.add_argument("--trace-every", type=float, default=300.0, help="seconds between snapshots")
    p.add_argument("--trace-frames", type=int, default=1, help="frames per traced allocation")
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
        "burst_every_s": args.burst_every,
        "batch_bytes": args.batch_bytes,
        "engine": args.engine or "default",
        "produced": result["produced"],
        "consumed": rows[-1]["consumed"] if rows else 0,
        "exit_code": result["exit_code"],
        "stopped_early": result["stopped_early"],
        "verdict": verdict(rows),
        "tracemalloc_growth": snapshot_diffs(args.trace) if args.trace else None,
        "rows": rows,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    plot(rows, args.png, f"soak: {args.rate:.0f} ev/s for {args.duration:.0f} s")
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
