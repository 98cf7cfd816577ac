"""`ragpulse qualify`: ADAMS metric qualification (docs/evaluation.md).

Light on purpose: the work (`stream.commands.qualify_run`, scipy, sklearn) is imported
only when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from stream.commands.args import add_report_outputs, non_negative, positive_int, scores_source
from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    q = sub.add_parser(
        "qualify", help="ADAMS metric qualification: Cohen's d, rewrite VR, RMAD per metric"
    )
    q.add_argument("--input", "-i", required=True, help="events JSONL with labels.human.overall")
    scores_source(q)
    q.add_argument(
        "--group-by",
        choices=["service", "model"],
        default="service",
        help="groups of the RMAD figure (service)",
    )
    q.add_argument(
        "--rewrites", type=positive_int, default=3, help="rewrites per good answer, at most (3)"
    )
    q.add_argument("--min-d", type=float, default=0.4, help="qualified when d > this (0.4)")
    q.add_argument(
        "--max-vr", type=non_negative, default=1.2, help="qualified when VR < this (1.2)"
    )
    q.add_argument(
        "--write-rewrites", metavar="FILE", help="write the rewrite events (JSONL) for scoring"
    )
    add_report_outputs(q, ".json .md")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.commands.qualify_run import run_qualify

    args.judge = args.judge or "embedded"
    return run_qualify(settings, args)
