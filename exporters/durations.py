"""Prometheus duration strings ('1h30m', '250ms') to seconds, for the rule generators."""

from __future__ import annotations

__all__ = ["duration_seconds"]

_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def duration_seconds(duration: str) -> float:
    """Seconds in a Prometheus duration string ('1h30m' -> 5400.0); string operations
    only (a config value is untrusted text)."""
    total, number, i = 0.0, "", 0
    while i < len(duration):
        ch = duration[i]
        if ch.isdigit():
            number += ch
            i += 1
            continue
        unit = "ms" if duration.startswith("ms", i) else ch
        if not number or unit not in _UNIT_SECONDS:
            raise ValueError(f"not a Prometheus duration: {duration!r}")
        total += int(number) * _UNIT_SECONDS[unit]
        number, i = "", i + len(unit)
    if number or not duration:
        raise ValueError(f"not a Prometheus duration: {duration!r}")
    return total
