"""Parse cost per event, the previous fast path against the current one, side by side.

    python -m bench.perf.parse [--runs 5] [--events 3000] [--per-dataset 1500] [-o FILE]

In one process, alternating old / new passes (the order swapped every run, so a noisy
neighbour hits both alike), CPU microseconds per event (`time.process_time`) of
`parse_event` on:

* the bundled traffic (`stream.demo.generate(N, seed=7)`, ~1 % malformed);
* events of each labelled data set in ``../shared/datasets`` (`bench.datasets.adapt`),
  serialised with `json.dumps`, when the data sets are there.

"old" is the fast path this module replaced (a regex pre-scan for NaN / big numbers, a
bracket count, then pydantic-core `Event.model_validate_json` with the two Python model
validators reading the caps from the context), falling back to the same careful path;
"new" is `parse_event` as it is. Writes ``bench/results/parse.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import re2
from pydantic import ValidationError

from stream.contract.events import (
    Event,
    EventLimits,
    InvalidEvent,
    _careful_parse,
    _fast_parse,
    parse_event,
)
from stream.demo import generate

__all__ = ["main", "old_parse_event", "run"]

OUT = Path(__file__).resolve().parents[1] / "results" / "parse.json"

# the previous fast path, verbatim (stream/contract/events.py before the msgspec path)
_CAREFUL = re2.compile(
    rb"[:,\[]\s*-?(?:NaN|Infinity|[0-9]{300}|[0-9]+(?:\.[0-9]*)?[eE]\+?[0-9]{3})"
)


def _old_fast_parse(raw: bytes, limits: EventLimits) -> Event | None:
    if raw.count(b"[") + raw.count(b"{") > limits.max_depth or _CAREFUL.search(raw):
        return None
    try:
        return Event.model_validate_json(raw, context={"limits": limits})
    except ValidationError:
        return None


def old_parse_event(raw: bytes, limits: EventLimits) -> Event:
    """`parse_event` as it was: the same pre-checks and careful path, the old fast path."""
    if not raw:
        raise InvalidEvent("empty_value", "the record value is empty")
    if len(raw) > limits.max_event_bytes:
        raise InvalidEvent("oversized", f"{len(raw)} bytes")
    fast = _old_fast_parse(raw, limits)
    return fast if fast is not None else _careful_parse(raw, limits)


def _pass(parse: Callable[[bytes, EventLimits], Event], raws: list[bytes]) -> float:
    limits = EventLimits()
    started = time.process_time()
    for raw in raws:
        try:  # noqa: SIM105 - contextlib.suppress costs more per event than try/except
            parse(raw, limits)
        except InvalidEvent:
            pass
    return (time.process_time() - started) / len(raws) * 1e6


def compare(raws: list[bytes], runs: int) -> dict[str, Any]:
    limits = EventLimits()
    for raw in raws:  # the two agree on every event before they are timed
        try:
            new: Event | None = parse_event(raw, limits)
        except InvalidEvent:
            new = None
        try:
            old: Event | None = old_parse_event(raw, limits)
        except InvalidEvent:
            old = None
        assert new == old, raw[:200]
    old_us: list[float] = []
    new_us: list[float] = []
    for i in range(runs):
        order = [(old_us, old_parse_event), (new_us, parse_event)]
        for sink, parse in order if i % 2 == 0 else order[::-1]:
            sink.append(_pass(parse, raws))
    old_med, new_med = statistics.median(old_us), statistics.median(new_us)
    return {
        "events": len(raws),
        "old_us_per_event": round(old_med, 2),
        "new_us_per_event": round(new_med, 2),
        "speedup": round(old_med / new_med, 2),
        "old_runs_us": [round(x, 2) for x in old_us],
        "new_runs_us": [round(x, 2) for x in new_us],
        "fast_path_share_old": _share(raws, _old_fast_parse),
        "fast_path_share_new": _share(raws, _fast_parse),
        "mean_event_bytes": round(statistics.mean(len(r) for r in raws)),
    }


def _share(raws: list[bytes], fast: Callable[[bytes, EventLimits], Event | None]) -> float:
    limits = EventLimits()
    return round(sum(1 for r in raws if fast(r, limits) is not None) / len(raws), 4)


def _dataset_raws(per_dataset: int) -> dict[str, list[bytes]]:
    try:
        from tests.support.datasets import adapt, available
    except ImportError:  # pragma: no cover - the bench package is always there
        return {}
    out: dict[str, list[bytes]] = {}
    for name in available():
        raws: list[bytes] = []
        try:
            for event in adapt(name):
                raws.append(json.dumps(event, ensure_ascii=False).encode())
                if len(raws) >= per_dataset:
                    break
        except (FileNotFoundError, OSError):  # the data set is not on this machine
            continue
        if raws:
            out[name] = raws
    return out


def run(runs: int, events: int, per_dataset: int) -> dict[str, Any]:
    corpora = {"bundled_traffic": [g.raw for g in generate(events, seed=7)]}
    corpora.update(_dataset_raws(per_dataset))
    return {
        "method": "CPU us per parse_event call, median of alternating runs in one process",
        "runs": runs,
        "corpora": {name: compare(raws, runs) for name, raws in corpora.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.perf.parse", description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--events", type=int, default=3000)
    ap.add_argument("--per-dataset", type=int, default=1500)
    ap.add_argument("-o", "--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    result = run(args.runs, args.events, args.per_dataset)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for name, row in result["corpora"].items():
        print(
            f"{name:18s} old {row['old_us_per_event']:7.2f} us  new "
            f"{row['new_us_per_event']:7.2f} us  x{row['speedup']:.2f}  fast path "
            f"{row['fast_path_share_old']:.1%} -> {row['fast_path_share_new']:.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
