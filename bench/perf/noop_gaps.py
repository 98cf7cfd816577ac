"""What idles stage (e)'s pinned core? A timeline of the no-op faust agent's window.

    python -m bench.perf.noop_gaps [--runs 3] [--events 10000] [--topic-events 50000]
        [--cpu 1] [--modes default,fifo,competitor,fetch-wait-10ms]
        [--bootstrap H:P --topic T]

Runs stage (e) (`bench.perf.stages` faust-noop: a no-op faust agent, pinned to one CPU,
clocked over the first N events) in a child process per run, with probes over the same
window: the time of every event the agent sees (gaps between events), every aiokafka
fetch request (`Fetcher._proc_fetch_request`: duration, whether it returned records),
faust's flow-control and idle waits (`Consumer.on_buffer_full`, `Consumer.sleep(>= 1 s)`
in `_wait_next_records`), and the scheduler's view: how long the pinned core was idle
(`/proc/stat`), how long it ran other processes, and how long the agent's thread sat
runnable but not running (`/proc/self/task/<tid>/schedstat`, run delay).

Modes: `default` (as stage (e)); `fifo` (the child runs SCHED_FIFO, so no other process
gets the pinned core while it is runnable); `competitor` (one spinning process in its own
session is pinned to the same core for the window); `fetch-wait-10ms` (aiokafka's
`fetch_max_wait_ms`, which faust hard-codes to 1500, set to 10). If the core is busy
with other processes and the agent's thread waits in the run queue, the deficit is CPU
contention; if the core is idle while the agent has no events, it is a wait in
faust/aiokafka/the broker. Writes bench/results/noop_gaps.json.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench.perf.stages import Clock, run_noop_agent

OUT = Path(__file__).resolve().parents[2] / "bench/results/noop_gaps.json"
MODES = ("default", "fifo", "competitor", "fetch-wait-10ms")
SPIN = "import sys\nsys.stdin.read(1)\nwhile True:\n    pass\n"


def _core_stat(cpu: int) -> tuple[float, float]:
    """(idle + iowait seconds, total seconds) of one CPU from /proc/stat."""
    hz = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                v = [int(x) for x in line.split()[1:9]]
                return (v[3] + v[4]) / hz, sum(v) / hz
    return 0.0, 0.0


def _schedstat(tid: int | None = None) -> tuple[float, float]:
    """(on-CPU seconds, runnable-but-waiting seconds) of one thread, or summed over all."""
    paths = (
        [f"/proc/self/task/{tid}/schedstat"] if tid else glob.glob("/proc/self/task/*/schedstat")
    )
    run = wait = 0.0
    for path in paths:
        try:
            with open(path) as f:
                a, b, _ = f.read().split()
        except (OSError, ValueError):
            continue
        run += int(a) / 1e9
        wait += int(b) / 1e9
    return run, wait


class ProbeClock(Clock):
    """Stage (e)'s clock, plus scheduler counters and an optional competitor at its edges."""

    def __init__(self, n: int, cpu: int, competitor: subprocess.Popen[bytes] | None) -> None:
        super().__init__(n)
        self.cpu = cpu
        self.competitor = competitor
        self.marks: dict[str, Any] = {}

    def _mark(self, edge: str) -> None:
        self.marks[edge] = {
            "t": time.perf_counter(),
            "core": _core_stat(self.cpu),
            "main": _schedstat(os.getpid()),
            "all": _schedstat(),
        }

    def tick(self, k: int = 1) -> None:
        was_started, was_done = self.started, self.done.is_set()
        if not was_started and self.competitor is not None and self.competitor.stdin:
            self.competitor.stdin.write(b"go")  # the competitor spins from here
            self.competitor.stdin.flush()
        super().tick(k)
        if self.started and not was_started:
            self._mark("start")
        if self.done.is_set() and not was_done:
            self._mark("end")
            if self.competitor is not None:
                self.competitor.kill()

    def result(self) -> dict[str, Any]:
        out = super().result()
        s, e = self.marks["start"], self.marks["end"]
        idle = e["core"][0] - s["core"][0]
        total = e["core"][1] - s["core"][1]
        out.update(
            core_busy=out["cpu_s"] / out["seconds"] if out["seconds"] else 0.0,
            core_idle_s=idle,
            core_other_s=max(0.0, total - idle - out["cpu_s"]),
            main_run_s=e["main"][0] - s["main"][0],
            main_runqueue_wait_s=e["main"][1] - s["main"][1],
            all_threads_runqueue_wait_s=e["all"][1] - s["all"][1],
        )
        return out


def _patch(log: list[tuple[Any, ...]], fetch_wait_ms: int | None) -> None:
    """Wrap the aiokafka/faust functions whose waits could idle the agent."""
    import aiokafka.consumer.fetcher as fetcher
    from faust.transport.consumer import Consumer

    now = time.perf_counter
    proc = fetcher.Fetcher._proc_fetch_request

    async def timed_proc(self: Any, assignment: Any, node_id: int, request: Any) -> bool:
        t = now()
        got: bool = await proc(self, assignment, node_id, request)
        tps = sum(len(parts) for _, parts in request.topics)
        log.append(("fetch", t, now(), tps, got, request._max_wait_ms))
        return got

    fetcher.Fetcher._proc_fetch_request = timed_proc
    if fetch_wait_ms is not None:
        init = fetcher.Fetcher.__init__

        def short_wait(self: Any, *a: Any, **kw: Any) -> None:
            kw["fetch_max_wait_ms"] = fetch_wait_ms
            init(self, *a, **kw)

        fetcher.Fetcher.__init__ = short_wait

    full = Consumer.on_buffer_full

    def on_buffer_full(self: Any, tp: Any) -> None:
        log.append(("buffer_full", now(), now(), tp.partition))
        full(self, tp)

    Consumer.on_buffer_full = on_buffer_full  # type: ignore[method-assign]
    sleep = Consumer.sleep

    async def timed_sleep(self: Any, n: float) -> None:
        t = now()
        await sleep(self, n)
        if n == 1:  # _wait_next_records' "no active partitions" sleep (consumer.py:808)
            log.append(("consumer_sleep", t, now(), n))

    Consumer.sleep = timed_sleep  # type: ignore[method-assign,assignment]


async def _agent(bootstrap: str, topic: str, clock: ProbeClock, times: list[float]) -> None:
    stamp = time.perf_counter
    await run_noop_agent(bootstrap, topic, clock, lambda: times.append(stamp()), limit_s=300)


def child(mode: str, bootstrap: str, topic: str, n: int, cpu: int) -> dict[str, Any]:
    """One stage-(e) run with the probes; the JSON row of that run."""
    os.sched_setaffinity(0, {cpu})
    if mode == "fifo":
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    competitor = None
    if mode == "competitor":
        competitor = subprocess.Popen(
            [sys.executable, "-c", SPIN], stdin=subprocess.PIPE, start_new_session=True
        )
        os.sched_setaffinity(competitor.pid, {cpu})
    log: list[tuple[Any, ...]] = []
    _patch(log, 10 if mode == "fetch-wait-10ms" else None)
    clock = ProbeClock(n, cpu, competitor)
    times: list[float] = []
    try:
        asyncio.run(_agent(bootstrap, topic, clock, times))
    finally:
        if competitor is not None:
            competitor.kill()
            competitor.wait()
    out = clock.result()
    t0, t1 = clock.marks["start"]["t"], clock.marks["end"]["t"]
    window = [t for t in times if t0 <= t <= t1]
    gaps = sorted((b - a for a, b in itertools.pairwise(window)), reverse=True)
    fetches = [e for e in log if e[0] == "fetch" and e[2] >= t0 and e[1] <= t1]
    waits = [e for e in log if e[0] == "consumer_sleep" and e[2] >= t0 and e[1] <= t1]
    out.update(
        mode=mode,
        max_gap_ms=1000 * gaps[0] if gaps else 0.0,
        top_gaps_ms=[round(1000 * g, 1) for g in gaps[:5]],
        gaps_over_50ms=sum(1 for g in gaps if g > 0.05),
        gap_s_over_5ms=sum(g for g in gaps if g > 0.005),
        fetches=len(fetches),
        fetch_max_ms=max((1000 * (e[2] - e[1]) for e in fetches), default=0.0),
        fetches_over_100ms=sum(1 for e in fetches if e[2] - e[1] > 0.1),
        empty_fetches=sum(1 for e in fetches if not e[4]),
        fetch_max_wait_ms=fetches[0][5] if fetches else None,
        buffer_full=sum(1 for e in log if e[0] == "buffer_full" and t0 <= e[1] <= t1),
        consumer_sleeps_1s=len(waits),
    )
    return out


def run_child(mode: str, bootstrap: str, topic: str, n: int, cpu: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.perf.noop_gaps", "--child", mode]
    cmd += ["--bootstrap", bootstrap, "--topic", topic, "--events", str(n), "--cpu", str(cpu)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"child {mode} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    row: dict[str, Any] = json.loads(lines[-1])
    row["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return row


KEYS = (
    "core_busy",
    "events_per_cpu_s",
    "core_idle_s",
    "core_other_s",
    "main_runqueue_wait_s",
    "max_gap_ms",
    "gaps_over_50ms",
    "fetches_over_100ms",
    "consumer_sleeps_1s",
    "buffer_full",
)


def measure(bootstrap: str, topic: str, args: argparse.Namespace) -> dict[str, Any]:
    modes = [m for m in args.modes.split(",") if m]
    rows: list[dict[str, Any]] = []
    for run in range(args.runs):
        for mode in modes:
            row = {"run": run, **run_child(mode, bootstrap, topic, args.events, args.cpu)}
            rows.append(row)
            brief = {k: round(row[k], 3) for k in ("seconds", *KEYS)}
            print(json.dumps({"mode": mode, "run": run, **brief}), file=sys.stderr, flush=True)
    summary = {
        mode: {k: statistics.median(r[k] for r in rows if r["mode"] == mode) for k in KEYS}
        for mode in modes
    }
    return {"summary": summary, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf.noop_gaps", description=__doc__)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--events", type=int, default=10_000)
    p.add_argument("--topic-events", type=int, default=50_000)
    p.add_argument("--cpu", type=int, default=1)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--bootstrap", help="use this broker (with --topic) instead of a new one")
    p.add_argument("--topic")
    p.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        row = child(args.child, args.bootstrap, args.topic, args.events, args.cpu)
        print(json.dumps(row), flush=True)
        return 0

    from bench.perf.kafkabench import produce
    from bench.perf.mdsection import machine
    from stream.demo import EmbeddedBroker

    params = {k: getattr(args, k) for k in ("runs", "events", "topic_events", "cpu", "modes")}
    if args.bootstrap and args.topic:
        result = measure(args.bootstrap, args.topic, args)
    else:
        with EmbeddedBroker() as broker:
            topic = f"noop.gaps-{uuid.uuid4().hex[:6]}"
            asyncio.run(produce(broker.bootstrap_servers, topic, args.topic_events))
            result = measure(broker.bootstrap_servers, topic, args)
    OUT.write_text(json.dumps({"machine": machine(), "params": params, **result}, indent=1))
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
