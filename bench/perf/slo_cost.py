"""What counting the SLOs costs on the detector path: `Pipeline.process` per event with the
default `slos` against `slos: []`, side by side in one process.

    python -m bench.perf.slo_cost [--n 20000] [--rounds 7]

The same bundled traffic (seed 7, baseline, N messages: malformed and duplicate ones
included) goes through two pipelines built from the two settings, each on its own
`PromFamilies`, alternating A/B each round after one warm-up pass each (patterns compiled,
label children cached). Prints per-event µs per round, the median ratio and its spread,
and CPU / wall of the timed span (≈ 1: the stage ran at full speed, nothing waited).
The whole path's run-to-run spread is larger than the counters' cost, so the step that
changed is also timed alone ("micro"): `EventMetrics.scored` (the per-turn metric update,
where the SLO counters live) on the parsed events and their failure modes, A/B the same
way.
Results: bench/results/slo_cost.json, BENCHMARKS.md "SLO counters".
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from exporters.event_metrics import EventMetrics
from exporters.prometheus import PromFamilies
from stream.contract.events import EventLimits, parse_event
from stream.demo import generate
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import load_settings

OUT = Path(__file__).resolve().parents[1] / "results" / "slo_cost.json"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _pipeline(slos: list[Any] | None) -> Pipeline:
    overrides: dict[str, Any] = {"drift": {"enabled": False}}
    if slos is not None:
        overrides["slos"] = slos
    settings = load_settings(**overrides)
    return Pipeline(settings, PromFamilies.with_label_caps(20, {}))


def _pass(pipeline: Pipeline, values: list[bytes]) -> tuple[float, float]:
    pipeline.dedupe = type(pipeline.dedupe)(0)  # every pass sees fresh event ids
    t0, c0 = time.perf_counter(), _cpu()
    for value in values:
        pipeline.process(value)
    return time.perf_counter() - t0, _cpu() - c0


def _micro(values: list[bytes], rounds: int) -> dict[str, Any]:
    probe = _pipeline([])
    events, modes = [], []
    for value in values:
        result = probe.process(value)
        if result.outcome == "scored" and result.scorecard is not None:
            events.append(parse_event(value, EventLimits()))
            modes.append(list(result.scorecard["failure_modes"]))
    exports = {"none": _pipeline([]).export, "default": _pipeline(None).export}
    per: dict[str, list[float]] = {k: [] for k in exports}

    def run(x: EventMetrics | None) -> float:
        assert x is not None
        scored = x.scored
        t0 = time.perf_counter()
        for event, m in zip(events, modes, strict=True):
            scored(event, [], m, 0.0)
        return time.perf_counter() - t0

    for x in exports.values():
        run(x)
    for r in range(rounds):
        for name in list(exports) if r % 2 == 0 else list(reversed(exports)):
            per[name].append(run(exports[name]) / len(events) * 1e9)
    ratios = [d / n for d, n in zip(per["default"], per["none"], strict=True)]
    return {
        "ns_per_event": {k: [round(v, 1) for v in vs] for k, vs in per.items()},
        "median_ns": {k: round(statistics.median(vs), 1) for k, vs in per.items()},
        "median_added_ns": round(
            statistics.median(per["default"]) - statistics.median(per["none"]), 1
        ),
        "median_ratio": round(statistics.median(ratios), 4),
        "ratio_spread": [round(min(ratios), 4), round(max(ratios), 4)],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    values = [g.raw for g in generate(args.n, seed=7)]
    runs = {"none": _pipeline([]), "default": _pipeline(None)}
    assert runs["default"].metrics is not None
    for p in runs.values():
        _pass(p, values)  # warm-up
    per: dict[str, list[float]] = {k: [] for k in runs}
    wall = cpu = 0.0
    for r in range(args.rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            w, c = _pass(runs[name], values)
            per[name].append(w / len(values) * 1e6)
            wall, cpu = wall + w, cpu + c
    ratios = [d / n for d, n in zip(per["default"], per["none"], strict=True)]
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.processor() or platform.machine()}, {platform.python_version()}",
        "events": len(values),
        "rounds": args.rounds,
        "us_per_event": {k: [round(v, 3) for v in vs] for k, vs in per.items()},
        "median_us": {k: round(statistics.median(vs), 3) for k, vs in per.items()},
        "median_ratio": round(statistics.median(ratios), 4),
        "ratio_spread": [round(min(ratios), 4), round(max(ratios), 4)],
        "cpu_over_wall": round(cpu / wall, 3),
        "micro_event_metrics_scored": _micro(values, args.rounds * 3),
    }
    print(json.dumps(result, indent=1))
    if not args.no_write:
        OUT.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
