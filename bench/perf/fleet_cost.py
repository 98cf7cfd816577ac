"""What the group's drift stage costs on the event path: stage (c) before and after.

    python -m bench.perf.fleet_cost --before /tmp/before [--rounds 3]
        [--topic-events 70000] [--events 40000] [--warmup 25000] [--cpu 1]
        [--out bench/results/fleet_cost.json]

`--before` is a checkout of the commit before the drift stage (per-replica detectors fed
inline, pickled snapshots), e.g. ``git worktree add /tmp/before e02e22c``. One embedded
broker and one generated topic; per round, in alternating order, stage (c) of
`bench throughput` (aiokafka engine, judges off, default settings) runs from each tree in
its own process pinned to `--cpu`. The after stage runs the whole drift stage in the
process: the observation buffer, its producer, and the owner of every series (one
replica owns every partition), so the detectors' work is in it too. The warm-up is long
(25,000 events, over 3 s) so that the owner, which feeds an interval 1 s + 2 s after
its end, is in steady state when the clock starts: its work in the timed window is then
the work of a window's worth of events. Reported: CPU µs per event per tree (median of
rounds), the after/before ratio per round, and observation records and bytes per event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.perf.kafkabench import produce
from bench.perf.mdsection import machine
from stream.demo import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[2]


def stage(tree: Path, bootstrap: str, topic: str, n: int, warmup: int, cpu: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.perf.stages", "--stage", "pipeline", "--engine",
           "aiokafka", "--bootstrap", bootstrap, "--topic", topic, "--n", str(n),
           "--warmup", str(warmup), "--cpu", str(cpu)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["PYTHONPATH"] = str(tree)
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=900)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"stage in {tree} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    result["us_per_event"] = 1e6 / result["events_per_cpu_s"]
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", type=Path, required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--topic-events", type=int, default=70_000)
    p.add_argument("--events", type=int, default=40_000)
    p.add_argument("--warmup", type=int, default=25_000)
    p.add_argument("--cpu", type=int, default=1)
    p.add_argument("--out", type=Path, default=ROOT / "bench/results/fleet_cost.json")
    args = p.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": ROOT}
    rounds: list[dict[str, Any]] = []
    with EmbeddedBroker() as broker:
        topic = f"bench.fleet-{uuid.uuid4().hex[:6]}"
        asyncio.run(produce(broker.bootstrap_servers, topic, args.topic_events))
        for i in range(args.rounds):
            order = ["before", "after"] if i % 2 == 0 else ["after", "before"]
            row: dict[str, Any] = {}
            for name in order:
                row[name] = stage(trees[name], broker.bootstrap_servers, topic, args.events,
                                  args.warmup, args.cpu)  # fmt: skip
                print(f"round {i + 1} {name}: {row[name]['us_per_event']:.1f} us/event "
                      f"({row[name]['events_per_cpu_s']:,.0f}/CPU-s, wall/CPU "
                      f"{row[name]['cpu_s'] / row[name]['seconds']:.2f}) "
                      f"load {row[name]['loadavg'][0]}", flush=True)  # fmt: skip
            row["ratio"] = row["after"]["us_per_event"] / row["before"]["us_per_event"]
            rounds.append(row)
    after = [r["after"] for r in rounds]
    events = [a["events"] for a in after]
    summary = {
        "before_us_per_event": statistics.median(r["before"]["us_per_event"] for r in rounds),
        "after_us_per_event": statistics.median(a["us_per_event"] for a in after),
        "ratio_median": statistics.median(r["ratio"] for r in rounds),
        "ratios": [round(r["ratio"], 4) for r in rounds],
        "observation_records_per_event": statistics.median(
            a.get("observations_published", 0) / e for a, e in zip(after, events, strict=True)),
        "observation_bytes_per_event": statistics.median(
            a.get("observation_bytes", 0) / e for a, e in zip(after, events, strict=True)),
    }  # fmt: skip
    report = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
              "args": {k: str(v) for k, v in vars(args).items()}, "summary": summary,
              "rounds": rounds}  # fmt: skip
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
