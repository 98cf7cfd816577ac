"""`ragpulse weights fit`: compound-score weights fitted on human labels (docs/evaluation.md).

Light on purpose: the work (`stream.commands.weights_run`, scipy, sklearn) is imported
only when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from stream.commands.args import folds, scores_source
from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    w = sub.add_parser("weights", help="compound-score weights fitted on human labels")
    w_sub = w.add_subparsers(dest="action", required=True)
    f = w_sub.add_parser("fit", help="fit non-negative weights of the compound score")
    f.add_argument("--input", "-i", required=True, help="events JSONL with labels.human.overall")
    scores_source(f)
    f.add_argument("--metrics", help="comma-separated metrics (default: scored on ≥ 80 %% rows)")
    f.add_argument("--folds", type=folds, default=5, help="stratified folds of the AUC (5)")
    f.add_argument(
        "--bootstrap", type=int, default=1000, help="bootstrap resamples of the CIs (1000)"
    )
    f.add_argument("--seed", type=int, default=0, help="folds and bootstrap seed (0)")
    f.add_argument("--output", "-o", required=True, help="weights JSON file")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.commands.weights_run import run_weights_fit

    args.judge = args.judge or "embedded"
    return run_weights_fit(settings, args)
