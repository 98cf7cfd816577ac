"""`ragpulse traffic`: the bundled traffic sample as JSONL (and its ground truth)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    t = sub.add_parser("traffic", help="write the bundled traffic sample as JSONL")
    t.add_argument("--count", "-n", type=int, default=1000)
    t.add_argument("--output", "-o", required=True)
    t.add_argument("--truth", help="write the ground-truth failure modes here (JSONL)")
    t.add_argument("--phase", choices=["baseline", "degraded"], default="baseline")
    t.add_argument("--seed", type=int, default=7)


def run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.demo import generate, write_jsonl, write_truth

    items = list(generate(args.count, seed=args.seed, phase=args.phase))
    write_jsonl(args.output, items)
    if args.truth:
        write_truth(args.truth, items)
    print(f"ragpulse traffic: wrote {len(items)} messages to {args.output}", file=sys.stderr)
    return 0
