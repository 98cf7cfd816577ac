"""`ragpulse score`: the same pipeline over a JSONL file of events (offline twin)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stream.commands.args import rate
from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    s = sub.add_parser("score", help="score a JSONL file of events (offline twin of the stream)")
    s.add_argument("--input", "-i", required=True, help="events JSONL, or - for stdin")
    s.add_argument("--output", "-o", default="-", help="scorecards JSONL, or - for stdout")
    s.add_argument(
        "--judge",
        default="none",
        help="judge sampled events with: embedded, openai (judge.options) or none (default)",
    )
    s.add_argument(
        "--sample-rate", type=rate, help="share of conversations judged (default: sampling.rate)"
    )
    s.add_argument(
        "--budget",
        action="store_true",
        help="apply sampling.budget's calls/minute and $/hour caps (off by default offline)",
    )


def run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.runtime.filesource import open_input, open_output, score_stream
    from stream.runtime.judging_build import build_judging, sampler_for
    from stream.runtime.pipeline import Pipeline

    # offline scoring judges only when asked to
    settings.judge.backend = settings.judge.backend.with_type(args.judge)
    if args.sample_rate is not None:
        settings.sampling.rate = args.sample_rate
    if not args.budget:  # a file has no wall-clock rate: a per-minute budget would only starve it
        settings.sampling.budget = settings.sampling.budget.model_copy(
            update={"calls_per_minute": None, "usd_per_hour": None}
        )
    judging = build_judging(settings)
    sampler = sampler_for(settings, judging)
    pipeline = Pipeline(settings, sampler=sampler)
    try:
        with open_input(args.input) as src, open_output(args.output) as dst:
            summary = score_stream(pipeline, src, dst, judging)
    except OSError as exc:
        print(f"ragpulse score: cannot open {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    finally:
        if judging is not None:
            judging.close(5)
    print(summary.render(), file=sys.stderr)
    return 0
