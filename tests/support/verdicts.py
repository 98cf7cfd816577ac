"""Frozen detector verdicts: what every detector says on the bundled sample and the
labelled public data sets, so a faster detector path can prove it says the same.

    python -m bench.perf.verdicts [--write] [--stage first|deflection|all]

Corpora: the bundled traffic (10,000 baseline events, seed 7, and 2,000 degraded ones)
and every adapter of ``bench.datasets`` over ``../shared/datasets`` (split ``all``). Per
corpus it records the event count and, for each event with a detection, the detections
(detector, category, span, failure mode, evidence) in pipeline order. ``--write`` stores
them in tests/detectors/data/verdicts.json.gz; tests/detectors/test_frozen_verdicts.py
recomputes and compares. The default detectors (the first stage) and the opt-in learned
second stage, ``deflection``, are frozen apart (``deflection_verdicts.json.gz``, the
detector alone), so a new model changes one file and never the first stage's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from stream.contract.events import InvalidEvent, parse_event
from stream.demo import generate
from stream.runtime.components import build_detectors
from stream.runtime.settings import Settings
from tests.support.datasets import adapt, available

__all__ = ["FROZEN", "FROZEN_DEFLECTION", "STAGES", "corpora", "verdicts"]

_DATA = Path(__file__).resolve().parents[2] / "tests/detectors/data"
FROZEN = _DATA / "verdicts.json.gz"
FROZEN_DEFLECTION = _DATA / "deflection_verdicts.json.gz"
#: stage -> (its frozen file, the settings it runs with, built when asked for)
STAGES: dict[str, tuple[Path, Callable[[], Settings]]] = {
    "first": (FROZEN, Settings),
    "deflection": (FROZEN_DEFLECTION, lambda: Settings(detectors={"enabled": ["deflection"]})),
}

Verdict = list[list[Any]]


def corpora() -> Iterator[tuple[str, Iterator[bytes]]]:
    yield "traffic_baseline", (g.raw for g in generate(10_000, seed=7))
    yield "traffic_degraded", (g.raw for g in generate(2_000, seed=7, phase="degraded"))
    for name in available():
        yield name, (json.dumps(e).encode() for e in adapt(name, "all"))


def verdicts(raws: Iterator[bytes], settings: Settings | None = None) -> dict[str, Any]:
    detectors = build_detectors(settings or Settings())
    count, found = 0, {}
    for index, raw in enumerate(raws):
        try:
            event = parse_event(raw)
        except InvalidEvent:
            continue
        count += 1
        hits = [
            [d.detector, d.category, list(d.span) if d.span else None, d.failure_mode, d.evidence]
            for det in detectors
            for d in det(event)
        ]
        if hits:
            found[f"{index}:{event.event_id}"] = hits
    return {"events": count, "detections": found}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf.verdicts", description=__doc__)
    p.add_argument("--write", action="store_true", help="store them in the stage's file")
    p.add_argument("--stage", choices=[*STAGES, "all"], default="first")
    args = p.parse_args(argv)
    for stage in STAGES if args.stage == "all" else [args.stage]:
        path, settings = STAGES[stage]
        out = {}
        for name, raws in corpora():
            out[name] = verdicts(raws, settings())
            n = sum(len(v) for v in out[name]["detections"].values())
            print(f"{stage} {name}: {out[name]['events']} events, {n} detections", file=sys.stderr)
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(path, "wt", encoding="utf-8") as fh:
                json.dump(out, fh, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            print(f"wrote {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
