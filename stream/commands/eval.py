"""`ragpulse eval`: detectors and judges over a JSONL file into a report (docs/evaluation.md).

Light on purpose: `stream.cli` imports every command module for its parser, so the code
that does the work (`stream.commands.eval_run`, `monitors.evaluation`) is imported only
when the command runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
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
    e = sub.add_parser("eval", help="detectors + judges over a JSONL file into a report")
    e.add_argument("--input", "-i", required=True, help="events JSONL, or - for stdin")
    e.add_argument("--labels", help="JSONL of {event_id, labels} merged into the events")
    e.add_argument("--baseline", help="a previous JSON report: test for regressions")
    add_report_outputs(e, ".json .md .html")
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


def run(settings: Settings, args: argparse.Namespace) -> int:
    from exporters.prometheus import ragpulse_version
    from exporters.report_markdown import summary_line
    from monitors.evaluation import build_report, exit_code, gate_floors
    from stream.commands.eval_run import judging_for, load_labels, read_lines, run_eval

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
