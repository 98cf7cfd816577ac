"""Detector precision / recall per failure mode on the bundled traffic sample.

    python -m bench.quality.sample_detectors [--count 10000] [--seed 7] [--phase baseline]

Generates the seeded sample (stream.demo.traffic), runs the same Pipeline as `ragpulse score`
over it and compares each event's failure modes with the generator's ground truth.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass

from stream.demo import generate
from stream.runtime.pipeline import Pipeline
from stream.runtime.settings import Settings

__all__ = ["PR", "measure"]


@dataclass
class PR:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def measure(
    count: int, seed: int = 7, phase: str = "baseline"
) -> tuple[dict[str, PR], Counter[str]]:
    pipeline = Pipeline(Settings())
    per_mode: dict[str, PR] = {}
    outcomes: Counter[str] = Counter()
    for item in generate(count, seed=seed, phase=phase):  # type: ignore[arg-type]
        result = pipeline.process(item.raw)
        outcomes[result.outcome] += 1
        if result.outcome != "scored" or result.scorecard is None:
            continue
        got = set(result.scorecard["failure_modes"])
        want = set(item.truth)
        for mode in got | want:
            pr = per_mode.setdefault(mode, PR())
            if mode in got and mode in want:
                pr.tp += 1
            elif mode in got:
                pr.fp += 1
            else:
                pr.fn += 1
    return dict(sorted(per_mode.items())), outcomes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--phase", choices=["baseline", "degraded"], default="baseline")
    ap.add_argument("--json", help="write raw numbers here")
    args = ap.parse_args()
    per_mode, outcomes = measure(args.count, args.seed, args.phase)
    print(
        f"bundled sample: {args.count} messages, seed {args.seed}, {args.phase}: {dict(outcomes)}"
    )
    print("| failure mode | truth | TP | FP | FN | precision | recall | F1 |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, pr in per_mode.items():
        print(
            f"| {mode} | {pr.tp + pr.fn} | {pr.tp} | {pr.fp} | {pr.fn} | "
            f"{pr.precision:.3f} | {pr.recall:.3f} | {pr.f1:.3f} |"
        )
    if args.json:
        raw = {m: {"tp": p.tp, "fp": p.fp, "fn": p.fn} for m, p in per_mode.items()}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"args": vars(args), "per_mode": raw, "outcomes": outcomes}, fh, indent=2)


if __name__ == "__main__":
    main()
