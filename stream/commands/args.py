"""Small pieces every subcommand's parser shares (no heavy imports: `ragpulse run` loads
this, not the `eval` / `calibrate` code)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from stream.contract.errors import RagpulseError

__all__ = [
    "EXIT_USAGE",
    "InputError",
    "check_outputs",
    "eprint",
    "folds",
    "key_value",
    "non_negative",
    "positive_int",
    "rate",
    "scores_source",
    "write_output",
    "write_reports",
]

EXIT_USAGE = 2


class InputError(RagpulseError):
    """An input file that cannot be read or parsed (exit code 2)."""


def rate(text: str) -> float:
    """A share in [0, 1] (argparse type)."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate between 0 and 1")
    return value


def key_value(text: str) -> tuple[str, float]:
    """`NAME=NUMBER` (for --min-pass-rate and --threshold)."""
    name, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not sep or not name or not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE with VALUE in [0, 1]")
    return name, number


def eprint(text: str) -> None:
    print(text, file=sys.stderr)


def write_output(text: str, output: str) -> None:
    """`text` to the file `output` (and a line on stderr saying so), or to stdout for "-"."""
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
        print(f"ragpulse: wrote {output}", file=sys.stderr)


def add_report_outputs(parser: argparse.ArgumentParser, formats: str) -> None:
    """The repeatable `--output/-o` of the report commands (format by suffix)."""
    parser.add_argument(
        "--output",
        "-o",
        action="append",
        required=True,
        help=f"report file; format by suffix: {formats} (repeatable)",
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


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0.0:
        raise argparse.ArgumentTypeError(f"{text} is not a non-negative number")
    return value


def folds(text: str) -> int:
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"{text}: at least 2 folds")
    return value


def scores_source(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    # default None, not "embedded": argparse would not see an explicit `--judge embedded`
    # (identical to the default) as conflicting with --scores
    src.add_argument("--judge", help="judge to run: embedded (default), openai")
    src.add_argument(
        "--scores",
        action="append",
        help="scorecards JSONL of `ragpulse score` instead of a judge run (repeatable)",
    )
