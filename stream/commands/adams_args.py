"""Parsers of `ragpulse qualify` and `ragpulse weights fit` (docs/evaluation.md).

Light on purpose: `stream.cli` imports this module for every command, so the code that
does the work (`stream.commands.qualify`, `stream.commands.weights`, scipy, sklearn) is
imported only when one of these subcommands runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from stream.runtime.settings import Settings

__all__ = ["add_qualify_parser", "add_weights_parser", "cmd_qualify", "cmd_weights"]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0.0:
        raise argparse.ArgumentTypeError(f"{text} is not a non-negative number")
    return value


def _folds(text: str) -> int:
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"{text}: at least 2 folds")
    return value


def _scores_source(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    # default None, not "embedded": argparse would not see an explicit `--judge embedded`
    # (identical to the default) as conflicting with --scores
    src.add_argument("--judge", help="judge to run: embedded (default), openai")
    src.add_argument(
        "--scores",
        action="append",
        help="scorecards JSONL of `ragpulse score` instead of a judge run (repeatable)",
    )


def add_qualify_parser(sub: Any) -> None:
    q = sub.add_parser(
        "qualify", help="ADAMS metric qualification: Cohen's d, rewrite VR, RMAD per metric"
    )
    q.add_argument("--input", "-i", required=True, help="events JSONL with labels.human.overall")
    _scores_source(q)
    q.add_argument(
        "--group-by",
        choices=["service", "model"],
        default="service",
        help="groups of the RMAD figure (service)",
    )
    q.add_argument(
        "--rewrites", type=_positive, default=3, help="rewrites per good answer, at most (3)"
    )
    q.add_argument("--min-d", type=float, default=0.4, help="qualified when d > this (0.4)")
    q.add_argument(
        "--max-vr", type=_non_negative, default=1.2, help="qualified when VR < this (1.2)"
    )
    q.add_argument(
        "--write-rewrites", metavar="FILE", help="write the rewrite events (JSONL) for scoring"
    )
    q.add_argument(
        "--output",
        "-o",
        action="append",
        required=True,
        help="report file; format by suffix: .json .md (repeatable)",
    )


def add_weights_parser(sub: Any) -> None:
    w = sub.add_parser("weights", help="compound-score weights fitted on human labels")
    w_sub = w.add_subparsers(dest="action", required=True)
    f = w_sub.add_parser("fit", help="fit non-negative weights of the compound score")
    f.add_argument("--input", "-i", required=True, help="events JSONL with labels.human.overall")
    _scores_source(f)
    f.add_argument("--metrics", help="comma-separated metrics (default: scored on ≥ 80 %% rows)")
    f.add_argument("--folds", type=_folds, default=5, help="stratified folds of the AUC (5)")
    f.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples of the CIs (1000)"
    )
    f.add_argument("--seed", type=int, default=0, help="folds and bootstrap seed (0)")
    f.add_argument("--output", "-o", required=True, help="weights JSON file")


def cmd_qualify(settings: Settings, args: argparse.Namespace) -> int:
    from stream.commands.qualify import run_qualify

    args.judge = args.judge or "embedded"
    return run_qualify(settings, args)


def cmd_weights(settings: Settings, args: argparse.Namespace) -> int:
    from stream.commands.weights import run_weights_fit

    args.judge = args.judge or "embedded"
    return run_weights_fit(settings, args)
