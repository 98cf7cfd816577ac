"""Where the detector path's time goes, per event (BENCHMARKS.md section `breakdown`).

    python -m bench breakdown [--runs 5] [--events 3000] [--smoke]

In one process, on the bundled generator's events (seed 7, 1 % malformed): the cost of
`Pipeline.process` + scorecard serialisation as the engine runs it, and of each of its
parts run alone on the same events: parsing (`parse_event`), each detector, building and
serialising the scorecard, the Prometheus export and the drift update. Microseconds of
CPU per event, min / median / max over `--runs` passes (each part's passes interleaved
with the others', so a noisy neighbour hits them alike). The parts after `parse` run on
events parsed once beforehand; their sum is less than the whole (see the section's text).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.perf.kafkabench import load_perf, save_perf
from bench.perf.mdsection import machine, replace_section, spread
from exporters import PromFamilies
from stream.contract.events import Event, EventLimits, InvalidEvent, _fast_parse, parse_event
from stream.demo import generate
from stream.runtime.pipeline import Pipeline, scorecard
from stream.runtime.settings import load_settings

__all__ = ["main", "markdown", "run"]

NAME = "breakdown"


def _cpu_us(fn: Callable[[], object], n: int) -> float:
    started = time.process_time()
    fn()
    return (time.process_time() - started) / n * 1e6


def run(runs: int, events: int) -> dict[str, Any]:
    settings = load_settings()
    metrics = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
    pipeline = Pipeline(settings, metrics)
    pipeline.dedupe.size = 0  # every pass sees the same events
    raws = [g.raw for g in generate(events, seed=7)]
    limits = EventLimits()
    parsed: list[Event] = []
    for raw in raws:
        try:  # noqa: SIM105 - the same loop shape as parse() below
            parsed.append(parse_event(raw, limits))
        except InvalidEvent:
            pass
    found = [[d for det in pipeline.detectors for d in det(e)] for e in parsed]
    drift = pipeline.drift

    def whole() -> None:
        for raw in raws:
            result = pipeline.process(raw)
            if result.scorecard is not None:
                result.scorecard_bytes()

    def parse() -> None:
        for raw in raws:
            try:  # noqa: SIM105 - cheaper than suppress() per event
                parse_event(raw, limits)
            except InvalidEvent:
                pass

    def cards() -> None:
        for e, d in zip(parsed, found, strict=True):
            json.dumps(scorecard(e, d), ensure_ascii=False, separators=(",", ":")).encode()

    def export() -> None:
        updates = pipeline.export
        assert updates is not None
        for e, d in zip(parsed, found, strict=True):
            updates.scored(e, d, [], 0.0)

    def drift_update() -> None:
        if drift is None:
            return
        for e, d in zip(parsed, found, strict=True):
            modes = sorted({x.failure_mode for x in d if x.failure_mode})
            drift.observe(modes, {(x.detector, x.category) for x in d}, e.expected_behavior, None)

    def detector(det: Any) -> Callable[[], None]:
        def go() -> None:
            for e in parsed:
                det(e)

        return go

    parts: dict[str, tuple[Callable[[], None], int]] = {
        "process": (whole, len(raws)),
        "parse": (parse, len(raws)),
        **{f"detector:{d.name}": (detector(d), len(raws)) for d in pipeline.detectors},
        "scorecard": (cards, len(raws)),
        "metrics": (export, len(raws)),
        "drift": (drift_update, len(raws)),
    }
    for fn, _ in parts.values():  # warm-up: caches, label children, drift streams
        fn()
    samples: dict[str, list[float]] = {k: [] for k in parts}
    for _ in range(runs):
        for key, (fn, n) in parts.items():
            samples[key].append(_cpu_us(fn, n))
    fast = sum(1 for raw in raws if _fast_parse(raw, limits) is not None)
    engine = _engine_us(load_perf().get("throughput", {}))
    return {
        "name": NAME,
        "machine": machine(),
        "runs": runs,
        "events": len(raws),
        "fast_parse_share": fast / len(raws),
        "us_per_event": {k: spread(v) for k, v in samples.items()},
        "engine_total_us": engine,
    }


def _engine_us(throughput: dict[str, Any]) -> float | None:
    """CPU per event of the whole aiokafka-engine stage (c) from the last throughput run."""
    try:
        rate = throughput["summary"]["c_aiokafka"]["events_per_cpu_s"]["median"]
    except (KeyError, TypeError):
        return None
    return 1e6 / rate if rate else None


def markdown(result: dict[str, Any]) -> str:
    m, us = result["machine"], result["us_per_event"]
    parts = [k for k in us if k != "process"]
    total = sum(us[k]["median"] for k in parts)
    rows = [
        f"| {k.removeprefix('detector:')}{' (detector)' if k.startswith('detector:') else ''} "
        f"| {us[k]['min']:.0f} / **{us[k]['median']:.0f}** / {us[k]['max']:.0f} "
        f"| {us[k]['median'] / total:.0%} |"
        for k in parts
    ]
    p = us["process"]
    lines = [
        "## Where the time goes (detector path, per event)",
        "",
        f"`python -m bench breakdown --runs {result['runs']}` (code: `bench/perf/breakdown.py`).",
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; {m['date']}; commit "
        f"{m['commit']}. {result['events']:,} generated events in one process; CPU "
        "microseconds per event, min / **median** / max over the passes.",
        "",
        "| part | µs per event | share of the parts |",
        "|---|---|---|",
        *rows,
        f"| **sum of the parts** | **{total:.0f}** | |",
        f"| `Pipeline.process` + serialise, as the engine calls it | {p['min']:.0f} / "
        f"**{p['median']:.0f}** / {p['max']:.0f} | |",
        "",
        "The parts after `parse` run on events parsed once beforehand. The whole costs more "
        "than the sum of its parts and this harness does not say where all of the difference "
        "goes: in a side measurement (2026-11-26, session 9) the six detectors cost 72 µs "
        "per event on freshly parsed events against 70 on parsed-once ones (the fresh "
        "event's memory is not yet in the CPU caches); the rest (serialising the scorecard, "
        "the dedupe check, the `Result`) is not attributed. "
        f"{result['fast_parse_share']:.1%} of the events took the fast parse "
        "(msgspec decodes, pydantic-core validates); the rest (malformed, deep, NaN-like "
        "values) took the careful path.",
    ]
    engine = result.get("engine_total_us")
    if engine:
        lines += [
            "",
            f"The whole stage (c) of the last throughput run cost {engine:.0f} µs of CPU per "
            f"event, {engine - p['median']:.0f} µs more than `Pipeline.process` here (the two "
            "from different runs). That difference is not the engine alone: a py-spy profile "
            "of stage (c) (2026-11-26, 30,000 events) put 92 % of the stage's CPU inside "
            "`Pipeline.process` and 8 % (~15 µs per event) in the engine (fetching and "
            "decoding records, publishing scorecards, delivery, commit); the garbage "
            "collector took 5 ms in 20,000 events. The same work costs more in the stage "
            "than in this loop, where each part runs alone and its data stays in the CPU "
            "caches: the one-pass RE2 set scan of a response costs ~2 µs run alone and "
            "~10 µs inside the pipeline (its DFA states are evicted between events).",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--events", type=int, default=3000)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    result = run(1 if args.smoke else args.runs, 100 if args.smoke else args.events)
    medians = {k: round(v["median"], 1) for k, v in result["us_per_event"].items()}
    print(json.dumps(medians, indent=1))
    if args.smoke:  # proves the harness works; not a measurement
        print(markdown(result))
        return 0
    save_perf(NAME, result)
    replace_section(NAME, markdown(result))
    print(f"median process: {statistics.median([medians['process']]):.0f} us/event")
    return 0


if __name__ == "__main__":
    sys.exit(main())
