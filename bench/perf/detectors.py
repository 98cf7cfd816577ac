"""Detector engine vs the naive approach (BENCHMARKS.md section `detectors`).

    python -m bench.perf.detectors [--runs 5] [--count 10000] [--cap 30] [--smoke]

Same 10,000 responses (seeded traffic generator, seed 7), same 81 regexes (read from the
built detectors, `bench.perf.naive_patterns`): the seed plan's Python loop of `re.search`
per pattern per response against ragpulse's engine (one `re2.Set` pass per pattern set,
then spans of the patterns that matched). Hit equivalence is checked pair by pair. The
whole detector suite (the default `detectors.enabled`, default options) runs on the same events for
context. Then the 100 KB adversarial inputs: the engine and the suite in process, the
naive loop in a child process killed at `--cap` seconds. Writes
bench/results/detectors.json and replaces the `detectors` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from bench.perf.detectors_md import markdown
from bench.perf.mdsection import machine, replace_section, spread, write_result
from bench.perf.naive_patterns import (
    ADVERSARIAL,
    ADVERSARIAL_BYTES,
    EngineMatcher,
    NaiveMatcher,
    adversarial_text,
    detector_sets,
    pattern_table,
)
from detectors import Detection, Detector, create_detector
from stream.contract.events import Event, EventLimits, parse_event
from stream.demo import generate
from stream.runtime.settings import DetectorSettings

__all__ = ["load_events", "markdown", "run"]

NAME = "detectors"


def run_detectors(detectors: Iterable[Detector], event: Event) -> list[Detection]:
    """Every detection of `detectors` on `event`, in order (the suite timed below)."""
    return [d for detector in detectors for d in detector(event)]


SEED = 7
DEFAULT_CAP_S = 30.0
PROBE_BYTES = 10_240  # per-pattern naive timing on a 10 KB slice of each adversarial input


def load_events(n: int, seed: int = SEED) -> list[Event]:
    """The first `n` well-formed events of the generator's (seed, baseline) stream."""
    events: list[Event] = []
    for item in generate(n + n // 20 + 50, seed=seed):
        if item.malformed is None:
            events.append(parse_event(item.raw))
            if len(events) == n:
                break
    return events


def _time(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _first_spans(
    matcher: NaiveMatcher | EngineMatcher, texts: Sequence[str]
) -> dict[tuple[int, str], tuple[int, int]]:
    """(response index, pattern key) -> span of the pattern's first match."""
    return {(i, k): (a, b) for i, text in enumerate(texts) for k, a, b in matcher.scan(text)}


def _differences(
    naive: set[tuple[int, str]], engine: set[tuple[int, str]], texts: Sequence[str]
) -> list[dict[str, Any]]:
    out = []
    for side, pairs in (("naive_only", naive - engine), ("engine_only", engine - naive)):
        for key, count in Counter(k for _, k in pairs).most_common():
            i = min(j for j, k in pairs if k == key)
            out.append({"side": side, "pattern": key, "responses": count, "example_index": i})
    return out


def _naive_adversarial(case: str, runs: int, cap_s: float, size: int) -> dict[str, Any]:
    """The naive loop on one adversarial input, one child process per run; the cap starts
    when the child says it is ready (patterns compiled); stops at the first kill."""
    cmd = [sys.executable, "-m", "bench.perf.naive_patterns", "--case", case, "--runs", "1"]
    cmd += ["--bytes", str(size)]
    seconds: list[float] = []
    hits = None
    for _ in range(runs):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # "ready" once compiled (start-up is not capped)
        try:
            out, _ = proc.communicate(timeout=cap_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return {"seconds": seconds, "timed_out": True, "cap_s": cap_s, "hits": hits}
        if proc.returncode != 0 or not ready.startswith("ready"):
            raise RuntimeError(f"naive child failed ({proc.returncode}): {ready}{out[-500:]}")
        line = json.loads(out.strip().splitlines()[-1])
        seconds += line["seconds"]
        hits = line["hits"]
    return {"seconds": seconds, "timed_out": False, "cap_s": cap_s, "hits": hits}


def _hot_patterns(naive: NaiveMatcher, text: str, top: int = 3) -> list[tuple[str, float]]:
    """The naive loop's slowest patterns on `text` (seconds each)."""
    timed = []
    for key, rx in naive.rows:
        start = time.perf_counter()
        rx.search(text)
        timed.append((key, time.perf_counter() - start))
    return sorted(timed, key=lambda kv: -kv[1])[:top]


def _adversarial_event(text: str) -> Event:
    raw = json.dumps({"event_id": "adv", "query": "What is the status?", "response": text})
    return parse_event(raw, EventLimits(max_text_chars=200_000))


def run(
    runs: int = 5, smoke: bool = False, count: int = 10_000, cap_s: float = DEFAULT_CAP_S
) -> dict[str, Any]:
    runs = max(1, runs)
    adv_bytes = ADVERSARIAL_BYTES
    if smoke:  # small enough that even the naive loop finishes in well under a second
        count, cap_s, adv_bytes = min(count, 100), min(cap_s, 20.0), 2048
    info = machine()
    sets = detector_sets()
    rows = pattern_table(sets)
    naive, engine = NaiveMatcher(rows), EngineMatcher(sets)
    suite: list[Detector] = [create_detector(n) for n in DetectorSettings().names()]
    events = load_events(count)
    texts = [e.response for e in events]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6

    naive_spans, engine_spans = _first_spans(naive, texts), _first_spans(engine, texts)
    naive_pairs, engine_pairs = set(naive_spans), set(engine_spans)
    ascii_pairs = set(_first_spans(NaiveMatcher(rows, ascii_only=True), texts))
    same_span = sum(naive_spans[k] == engine_spans[k] for k in naive_pairs & engine_pairs)
    times: dict[str, list[float]] = {"naive": [], "engine": [], "suite": []}
    for _ in range(runs):  # interleaved, so load changes hit every side alike
        times["engine"].append(_time(lambda: [engine.scan(t) for t in texts]))
        times["naive"].append(_time(lambda: [naive.scan(t) for t in texts]))
        times["suite"].append(_time(lambda: [run_detectors(suite, e) for e in events]))

    adversarial: dict[str, Any] = {}
    for case in ADVERSARIAL:
        text = adversarial_text(case, adv_bytes)
        event = _adversarial_event(text)
        adversarial[case] = {
            "bytes": len(text.encode("utf-8")),
            "unit": ADVERSARIAL[case],
            "engine_s": [_time(partial(engine.scan, text)) for _ in range(runs)],
            "suite_s": [_time(partial(run_detectors, suite, event)) for _ in range(runs)],
            "engine_hits": len(engine.scan(text)),
            "naive": _naive_adversarial(case, 1 if smoke else runs, cap_s, adv_bytes),
            "naive_hot_10kb": _hot_patterns(
                naive, adversarial_text(case, min(PROBE_BYTES, adv_bytes))
            ),
        }
    ratios = [n / e for n, e in zip(times["naive"], times["engine"], strict=True)]
    return {
        "name": NAME,
        "machine": info,
        "loadavg_after": machine()["loadavg"],
        "smoke": smoke,
        "runs": runs,
        "responses": len(texts),
        "megabytes": mb,
        "patterns": len(rows),
        "pattern_sets": {name: len(pset) for name, pset in sets.items()},
        "detectors": [d.name for d in suite],
        "seconds": times,
        "mb_per_s": {k: spread([mb / t for t in v]) for k, v in times.items()},
        "ratio_engine_over_naive": spread(ratios),
        "equivalence": {
            "naive_pairs": len(naive_pairs),
            "engine_pairs": len(engine_pairs),
            "naive_ascii_pairs": len(ascii_pairs),
            "ascii_identical": ascii_pairs == engine_pairs,
            "same_first_span": same_span,
            "differences": _differences(naive_pairs, engine_pairs, texts),
        },
        "adversarial": adversarial,
        "target_ratio": 5.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--cap", type=float, default=DEFAULT_CAP_S, help="naive adversarial cap, s")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.runs, args.smoke, count=args.count, cap_s=args.cap)
    print(json.dumps({k: result[k] for k in ("mb_per_s", "ratio_engine_over_naive")}, indent=1))
    if args.smoke:  # a smoke run proves the harness works; it is not a measurement
        print(markdown(result))
        return 0
    write_result(NAME, result)
    replace_section(NAME, markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
