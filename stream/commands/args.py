"""Small pieces every subcommand's parser shares (no heavy imports: `ragpulse run` loads
this, not the `eval` / `calibrate` code)."""

from __future__ import annotations

import argparse
import sys

from stream.contract.errors import RagpulseError

__all__ = ["InputError", "eprint", "key_value", "rate"]


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
