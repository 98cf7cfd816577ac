"""How much of stage (c) the detectors are: the most a compiled detector core could give.

    python -m bench.perf.headroom [--rounds 3] [--topic-events 30000] [--events 20000]
        [--warmup 5000] [--cpu 1] [--each] [--out bench/results/headroom.json]

One embedded broker and one generated topic (as `bench throughput`); per round, in an
order that alternates, three stages each in its own process pinned to `--cpu`:

* (c) the ragpulse stage of `bench throughput` (aiokafka engine, judges off);
* (c0) the same with no detectors (``RAGPULSE_DETECTORS__ENABLED=[]``): parse, dedupe,
  scorecard, metrics, drift, publishing and commits still run;
* (e) the no-op faust agent.

With ``--each``, also (c:NAME) per default detector: the stage with that detector alone
(``RAGPULSE_DETECTORS__ENABLED=["NAME"]``); (c:NAME) - (c0) is that detector's cost in the
stage, where its data competes for the CPU caches with the rest of the event's work.

Per stage: events per CPU-second and CPU µs per event; per round: (c)/(e), (c0)/(e) and
the detectors' share, (c) - (c0) in µs per event. (c0)/(e) bounds what moving the
detectors out of Python can reach: it is the ratio with detectors that cost nothing.
Medians over the rounds are printed and written with every round's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.perf.kafkabench import produce, run_stage
from bench.perf.mdsection import machine
from stream.demo import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[2]
TOPIC = "bench.headroom"
#: key -> (stage args, extra RAGPULSE_* settings)
STAGES: dict[str, tuple[list[str], dict[str, str]]] = {
    "c": (["--stage", "pipeline", "--engine", "aiokafka"], {}),
    "c0": (["--stage", "pipeline", "--engine", "aiokafka"], {"RAGPULSE_DETECTORS__ENABLED": "[]"}),
    "e": (["--stage", "faust-noop"], {}),
}


def stages(each: bool) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The stages to run: (c), (c0), (e), and with `each` one (c:NAME) per default detector."""
    out = dict(STAGES)
    if each:
        from stream.runtime.settings import DetectorSettings

        for name in DetectorSettings().names():
            env = {"RAGPULSE_DETECTORS__ENABLED": json.dumps([name])}
            out[f"c:{name}"] = (STAGES["c"][0], env)
    return out


def run(
    rounds: int, topic_events: int, events: int, warmup: int, cpu: int | None, each: bool = False
) -> dict[str, Any]:
    per_round: list[dict[str, Any]] = []
    plan = stages(each)
    with EmbeddedBroker() as broker:
        bs = broker.bootstrap_servers
        asyncio.run(produce(bs, TOPIC, topic_events))
        keys = list(plan)
        for r in range(rounds):
            got: dict[str, Any] = {}
            for key in keys if r % 2 == 0 else reversed(keys):
                args, env = plan[key]
                argv = [*args, "--bootstrap", bs, "--topic", TOPIC, "--n", str(events),
                        "--warmup", str(warmup)]  # fmt: skip
                got[key] = run_stage(argv, cpu, env=env)
                got[key]["cpu_us_per_event"] = 1e6 / got[key]["events_per_cpu_s"]
                print(f"  round {r + 1} {key}: {got[key]['events_per_cpu_s']:,.0f}/CPU-s "
                      f"({got[key]['cpu_us_per_event']:.1f} us), load {got[key]['loadavg'][0]}",
                      flush=True)  # fmt: skip
            e = got["e"]["events_per_cpu_s"]
            got["c_over_e_cpu"] = got["c"]["events_per_cpu_s"] / e
            got["c0_over_e_cpu"] = got["c0"]["events_per_cpu_s"] / e
            got["detectors_us"] = got["c"]["cpu_us_per_event"] - got["c0"]["cpu_us_per_event"]
            got["alone_us"] = {
                k[2:]: got[k]["cpu_us_per_event"] - got["c0"]["cpu_us_per_event"]
                for k in keys
                if k.startswith("c:")
            }
            per_round.append(got)
    summary = {
        name: statistics.median(pick(g) for g in per_round)
        for name, pick in {
            "c_events_per_cpu_s": lambda g: g["c"]["events_per_cpu_s"],
            "c0_events_per_cpu_s": lambda g: g["c0"]["events_per_cpu_s"],
            "e_events_per_cpu_s": lambda g: g["e"]["events_per_cpu_s"],
            "c_us": lambda g: g["c"]["cpu_us_per_event"],
            "c0_us": lambda g: g["c0"]["cpu_us_per_event"],
            "e_us": lambda g: g["e"]["cpu_us_per_event"],
            "c_over_e_cpu": lambda g: g["c_over_e_cpu"],
            "c0_over_e_cpu": lambda g: g["c0_over_e_cpu"],
            "detectors_us": lambda g: g["detectors_us"],
        }.items()
    }
    if each:
        summary["alone_us"] = {
            name: statistics.median(g["alone_us"][name] for g in per_round)
            for name in per_round[0]["alone_us"]
        }
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "rounds": rounds,
        "topic_events": topic_events,
        "events": events,
        "warmup": warmup,
        "cpu_pinned": cpu,
        "per_round": per_round,
        "summary": summary,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--topic-events", type=int, default=30_000)
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--warmup", type=int, default=5_000)
    p.add_argument("--cpu", type=int, default=1)
    p.add_argument("--each", action="store_true", help="also each detector alone")
    p.add_argument("--out", type=Path, default=ROOT / "bench/results/headroom.json")
    a = p.parse_args(argv)
    if a.warmup + a.events > a.topic_events:
        p.error("--warmup + --events must not exceed --topic-events")
    result = run(a.rounds, a.topic_events, a.events, a.warmup, a.cpu, a.each)
    a.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
