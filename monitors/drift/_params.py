"""Checks of detector parameters (each names the detector and the parameter when it fails)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MAX_SIZE", "check_choice", "check_number"]

#: upper bound of every size parameter (windows, warm-ups, logs): a spec read back from
#: data cannot make a detector allocate more than this many samples
MAX_SIZE = 1_000_000


def check_number(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    integer: bool = False,
) -> Any:
    """Validate one numeric parameter; ValueError naming `owner.name` when it is wrong."""
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type or not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be {kind}, got {value!r}")
    if low is not None and (value <= low if open_low else value < low):
        raise ValueError(f"{owner}: {name} must be {'>' if open_low else '>='} {low}, got {value}")
    if high is not None and (value >= high if open_high else value > high):
        raise ValueError(
            f"{owner}: {name} must be {'<' if open_high else '<='} {high}, got {value}"
        )
    return value


def check_choice(owner: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{owner}: {name} must be one of {', '.join(choices)}; got {value!r}")
    return str(value)
