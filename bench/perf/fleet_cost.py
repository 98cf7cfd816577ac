"""What the group's drift stage costs on the event path: stage (c) before and after.

    python -m bench.perf.fleet_cost --before /tmp/before [--rounds 3]
        [--topic-events 70000] [--events 40000] [--warmup 25000] [--cpu 1]
        [--out bench/results/fleet_cost.json]
    python -m bench.perf.fleet_cost --before /tmp/before --micro [--rounds 5]

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

`--micro` isolates the drift work from the stage's noise: 40,000 bundled events are
scored once, then only their drift step is timed in one process per tree and round
(`process_time`): before, `DriftMonitor.observe` per event (the detectors inline); after,
the per-event counting into the observation buffer, and separately the owner's merge,
release and detector feed of those intervals.
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


_MICRO = """
import json, sys, time
from stream.demo.traffic import generate
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import load_settings
from monitors.drift.monitor import DriftMonitor
s = load_settings(judge={"backend": "none"})
p = Pipeline(s, run_drift=False)
inputs = []
for g in generate(40000, seed=3):
    r = p.process(g.raw)
    if r.outcome == "scored":
        c = r.scorecard
        cats = {(d["detector"], d["category"]) for d in c["detections"]} or frozenset()
        inputs.append((c["failure_modes"], cats, None, c.get("service")))
n = len(inputs)
out = {}
if sys.argv[1] == "before":
    mon = DriftMonitor(s.drift)
    t = time.process_time()
    for fm, c, e, sv in inputs:
        mon.observe(fm, c, e, sv)
    out["inline_us"] = (time.process_time() - t) / n * 1e6
else:
    from monitors.fleet import FleetOwner, ObservationBuffer
    mon, buf = DriftMonitor(s.drift), ObservationBuffer("g", 1.0)
    owner = FleetOwner(s.drift, DriftMonitor(s.drift), "g")
    owner.assign(0)
    now, t = 1000.0, time.process_time()
    for fm, c, e, sv in inputs:
        now += 0.0002  # 5,000 events/s
        buf.add_rates(mon.rate_samples(fm, c, e), mon.service_label(sv), now)
    t1 = time.process_time()
    for off, rec in enumerate(buf.flush(now + 10)):
        owner.offer(0, off, rec, now)
    owner.release(now + 100)
    out["event_path_us"] = (t1 - t) / n * 1e6
    out["owner_us"] = (time.process_time() - t1) / n * 1e6
print(json.dumps(out))
"""


def micro(trees: dict[str, Path], rounds: int, cpu: int) -> dict[str, Any]:
    rows = []
    for i in range(rounds):
        row: dict[str, Any] = {}
        for name in ["before", "after"] if i % 2 == 0 else ["after", "before"]:
            env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
            env["PYTHONPATH"] = str(trees[name])
            cmd = ["taskset", "-c", str(cpu), sys.executable, "-c", _MICRO, name]
            out = subprocess.run(cmd, cwd=trees[name], env=env, capture_output=True, text=True,
                                 timeout=900, check=True)  # fmt: skip
            row.update(json.loads(out.stdout.splitlines()[-1]))
        row["after_us"] = row["event_path_us"] + row["owner_us"]
        print(
            f"round {i + 1}: before {row['inline_us']:.2f} us/event inline; after "
            f"{row['event_path_us']:.2f} event path + {row['owner_us']:.2f} owner",
            flush=True,
        )
        rows.append(row)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    return {"rounds": rows, "medians": med}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", type=Path, required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--topic-events", type=int, default=70_000)
    p.add_argument("--events", type=int, default=40_000)
    p.add_argument("--warmup", type=int, default=25_000)
    p.add_argument("--cpu", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--micro", action="store_true", help="only the drift step, in-process")
    args = p.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": ROOT}
    if args.micro:
        result = micro(trees, args.rounds, args.cpu)
        result["date"] = datetime.now(UTC).isoformat(timespec="seconds")
        result["machine"] = machine()
        out = args.out or ROOT / "bench/results/fleet_cost_micro.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result["medians"], indent=2))
        return 0
    args.out = args.out or ROOT / "bench/results/fleet_cost.json"
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
