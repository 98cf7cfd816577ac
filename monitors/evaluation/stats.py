"""Small statistical helpers over scipy (no hand-written statistics)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["bh_adjust", "bootstrap_delta_ci", "bootstrap_mean_ci", "finite", "quantile"]

_RESAMPLES = 2000
_SEED = 20240601  # fixed: the same input gives the same report


def finite(value: float | None) -> float | None:
    """`value` rounded to 6 places, or None when it is missing or not finite."""
    if value is None:
        return None
    value = float(value)
    return round(value, 6) if math.isfinite(value) else None


def quantile(values: Sequence[float], q: float) -> float | None:
    return finite(float(np.quantile(values, q))) if len(values) else None


def bootstrap_mean_ci(values: Sequence[float], level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap CI of the mean; None with fewer than 2 values."""
    if len(values) < 2:
        return None
    from scipy import stats  # lazy: `ragpulse run` imports this package, not scipy

    x = np.asarray(values, dtype=float)
    if np.all(x == x[0]):
        return [finite(x[0]) or 0.0, finite(x[0]) or 0.0]
    res = stats.bootstrap(
        (x,),
        np.mean,
        confidence_level=level,
        n_resamples=_RESAMPLES,
        method="percentile",
        random_state=np.random.default_rng(_SEED),
    )
    return [finite(res.confidence_interval.low) or 0.0, finite(res.confidence_interval.high) or 0.0]


def _mean_delta(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    result: np.ndarray = np.mean(x, axis=axis) - np.mean(y, axis=axis)
    return result


def bootstrap_delta_ci(
    current: Sequence[float], baseline: Sequence[float], level: float = 0.95
) -> list[float] | None:
    """Percentile bootstrap CI of mean(current) - mean(baseline) (independent samples)."""
    if len(current) < 2 or len(baseline) < 2:
        return None
    from scipy import stats

    x = np.asarray(current, dtype=float)
    y = np.asarray(baseline, dtype=float)
    res = stats.bootstrap(
        (x, y),
        _mean_delta,
        confidence_level=level,
        n_resamples=_RESAMPLES,
        method="percentile",
        random_state=np.random.default_rng(_SEED),
    )
    low, high = res.confidence_interval.low, res.confidence_interval.high
    if not (math.isfinite(low) and math.isfinite(high)):  # degenerate (no spread at all)
        delta = float(x.mean() - y.mean())
        return [round(delta, 6), round(delta, 6)]
    return [round(float(low), 6), round(float(high), 6)]


def bh_adjust(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (scipy.stats.false_discovery_control)."""
    from scipy import stats

    if not p_values:
        return []
    adjusted = stats.false_discovery_control(np.asarray(p_values, dtype=float), method="bh")
    return [float(p) for p in np.atleast_1d(adjusted)]
