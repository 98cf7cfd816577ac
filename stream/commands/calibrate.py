"""`ragpulse calibrate`: agreement of a judge with human labels (docs/evaluation.md).

Light on purpose: the work (`stream.commands.calibrate_run`, `monitors.evaluation`) is
imported only when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from stream.commands.args import (
    EXIT_USAGE,
    InputError,
    add_report_outputs,
    check_outputs,
    eprint,
    key_value,
    rate,
    write_reports,
)
from stream.runtime.settings import ConfigError, Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    c = sub.add_parser("calibrate", help="agreement of a judge with human labels (kappa ...)")
    c.add_argument("--input", "-i", required=True, help="events JSONL with labels.human")
    c.add_argument("--judge", default="embedded", help="judge to run: embedded or openai")
    c.add_argument("--compare-judge", help="a second judge to run (panel agreement)")
    c.add_argument("--scores", help="scorecards JSONL of `ragpulse score` (no judge runs)")
    c.add_argument("--compare-scores", help="scorecards JSONL of a second judge")
    c.add_argument("--kappa-target", type=rate, default=0.8, help="flag metrics below (0.8)")
    c.add_argument(
        "--threshold",
        type=key_value,
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="good/bad cut of a metric (repeatable)",
    )
    add_report_outputs(c, ".json .md")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from monitors.evaluation import EXIT_GATE_FAILED, build_calibration
    from stream.commands.calibrate_run import (
        gate_thresholds,
        judge_scores,
        load_human,
        load_scorecards,
    )
    from stream.commands.eval_run import read_lines

    try:
        check_outputs("calibration", args.output)
        events, human = load_human(read_lines(args.input), settings.limits)
        if not human:
            raise InputError(f"{args.input}: no event carries labels.human")
        first = (
            load_scorecards(args.scores)
            if args.scores
            else judge_scores(settings, args.judge, events)
        )
        judges = [first]
        if args.compare_scores:
            judges.append(load_scorecards(args.compare_scores))
        elif args.compare_judge:
            judges.append(judge_scores(settings, args.compare_judge, events))
        if len(judges) == 2 and judges[0][0] == judges[1][0]:  # same judge twice: tell apart
            judges[1] = (f"{judges[1][0]} (second)", judges[1][1])
    except (InputError, ConfigError) as exc:
        eprint(f"ragpulse calibrate: {exc}")
        return EXIT_USAGE
    thresholds = gate_thresholds(settings.gates, dict(args.threshold))
    report = build_calibration(
        human, judges, thresholds, args.kappa_target, extra={"input": args.input}
    )
    write_reports(report, args.output)
    flagged = report["flagged"]
    eprint(f"ragpulse calibrate: {len(human)} labelled events, {len(flagged)} below κ target")
    return EXIT_GATE_FAILED if flagged else 0
