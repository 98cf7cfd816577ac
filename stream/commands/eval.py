"""The `ragpulse eval` and `ragpulse calibrate` subcommands (see docs/evaluation.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from stream.commands.args import InputError, eprint, key_value, rate
from stream.runtime.settings import ConfigError, Settings

__all__ = [
    "add_calibrate_parser",
    "add_eval_parser",
    "check_outputs",
    "cmd_calibrate",
    "cmd_eval",
    "write_reports",
]

EXIT_USAGE = 2


def add_eval_parser(sub: Any) -> None:
    e = sub.add_parser("eval", help="detectors + judges over a JSONL file into a report")
    e.add_argument("--input", "-i", required=True, help="events JSONL, or - for stdin")
    e.add_argument("--labels", help="JSONL of {event_id, labels} merged into the events")
    e.add_argument("--baseline", help="a previous JSON report: test for regressions")
    e.add_argument(
        "--output",
        "-o",
        action="append",
        required=True,
        help="report file; format by suffix: .json .md .html (repeatable)",
    )
    e.add_argument("--judge", default="embedded", help="embedded (default), openai or none")
    e.add_argument("--sample-rate", type=rate, default=1.0, help="share judged (default 1)")
    e.add_argument(
        "--min-pass-rate",
        type=key_value,
        action="append",
        default=[],
        metavar="GATE=RATE",
        help="pass-rate floor of a gate tier (repeatable)",
    )
    e.add_argument("--alpha", type=rate, default=0.05, help="significance level (0.05)")
    e.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 4 on a significant regression against --baseline",
    )


def add_calibrate_parser(sub: Any) -> None:
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
    c.add_argument(
        "--output",
        "-o",
        action="append",
        required=True,
        help="report file; format by suffix: .json .md (repeatable)",
    )


def check_outputs(kind: str, outputs: list[str]) -> None:
    """InputError unless every output's suffix has a renderer for reports of `kind`."""
    from exporters.reports import report_formats

    formats = report_formats(kind)
    for out in outputs:
        if Path(out).suffix.lower() not in formats:
            raise InputError(f"--output {out}: the suffix must be one of {formats}")


def write_reports(report: dict[str, Any], outputs: list[str]) -> None:
    """Render `report` into every output (format by suffix)."""
    from exporters.reports import write_report

    for out in outputs:
        write_report(report, out)
        eprint(f"ragpulse: wrote {out}")


def _load_baseline(path: str) -> dict[str, Any]:
    from monitors.evaluation import REPORT_FORMAT

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read baseline {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"baseline {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise InputError(f"baseline {path} is not a {REPORT_FORMAT} JSON report")
    return data


def cmd_eval(settings: Settings, args: argparse.Namespace) -> int:
    from exporters.prometheus import ragpulse_version
    from exporters.report_markdown import summary_line
    from monitors.evaluation import build_report, exit_code, gate_floors
    from stream.commands.evaluate import judging_for, load_labels, read_lines, run_eval

    try:
        check_outputs("eval", args.output)
        baseline = _load_baseline(args.baseline) if args.baseline else None
        labels = load_labels(args.labels) if args.labels else {}
        lines = read_lines(args.input)
        judging = judging_for(settings, args.judge)
        try:
            run = run_eval(settings, lines, labels, judging, args.sample_rate)
        finally:
            if judging is not None:
                judging.close(5)
    except (InputError, ConfigError) as exc:
        eprint(f"ragpulse eval: {exc}")
        return EXIT_USAGE
    run.input.path = args.input
    gate_alert = settings.alerts.critical_gate
    floors = gate_floors(gate_alert.gates, gate_alert.floor, dict(args.min_pass_rate))
    extra = {
        "ragpulse_version": ragpulse_version(),
        "sample_rate": args.sample_rate,
        "baseline": args.baseline,
    }
    report = build_report(
        run.records,
        run.input,
        run.judge,
        settings.gates,
        floors,
        gate_alert.gates,
        baseline,
        args.alpha,
        extra,
        args.fail_on_regression,
    )
    write_reports(report, args.output)
    eprint(f"ragpulse eval: {summary_line(report)}")
    return exit_code(report, args.fail_on_regression)


def cmd_calibrate(settings: Settings, args: argparse.Namespace) -> int:
    from monitors.evaluation import EXIT_GATE_FAILED, build_calibration
    from stream.commands.calibrate import gate_thresholds, judge_scores, load_human, load_scorecards
    from stream.commands.evaluate import read_lines

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
