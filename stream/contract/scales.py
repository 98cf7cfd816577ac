"""Score scales, defined once: the severity bands of judge scores and the gate tiers.

Severity bands (DESIGN.md): severe 0.00-0.30, moderate 0.31-0.60, minor 0.61-0.85,
none 0.86-1.00. The Prometheus histogram's buckets, the PromQL band queries, the report
plots and the scorecard's `severity` all read these edges.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "BAND_EDGES",
    "GATES",
    "GATE_ACTIONS",
    "SEVERITY_BANDS",
    "Gate",
    "severity",
]

#: (upper bound, band), in order
SEVERITY_BANDS: tuple[tuple[float, str], ...] = (
    (0.30, "severe"),
    (0.60, "moderate"),
    (0.85, "minor"),
    (1.00, "none"),
)
#: the inner edges between the bands (histogram buckets, plot shading)
BAND_EDGES: tuple[float, ...] = tuple(upper for upper, _ in SEVERITY_BANDS[:-1])

#: gate tiers, strictest first, and what a failure means for each
Gate = Literal["critical", "quality", "diagnostic"]
GATES: tuple[Gate, ...] = ("critical", "quality", "diagnostic")
GATE_ACTIONS: dict[str, str] = {"critical": "page", "quality": "warn", "diagnostic": "monitor"}


def severity(score: float) -> str:
    """The band a score in [0, 1] falls in."""
    for upper, band in SEVERITY_BANDS:
        if score <= upper:
            return band
    return "none"
