"""Judge-vs-human (and judge-vs-judge) agreement: scipy correlations, scikit-learn κ.

A human label is a number in [0, 1] (1 = good), a bool (True = good) or a severity band
name. Numbers and bands are *graded*: they have a band (a number's band is
`severity(value)`) and a value (a band's value is its midpoint). Bools only say good/bad.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from monitors.evaluation.stats import finite
from monitors.metrics.base import SEVERITY_BANDS, severity

__all__ = [
    "BANDS",
    "BAND_MIDPOINTS",
    "ECE_BINS",
    "HumanLabel",
    "agreement",
    "expected_calibration_error",
    "panel_agreement",
    "parse_human",
    "reliability",
]

BANDS: tuple[str, ...] = tuple(band for _, band in SEVERITY_BANDS)
BAND_MIDPOINTS = {"severe": 0.15, "moderate": 0.455, "minor": 0.73, "none": 0.93}
ECE_BINS = 10


def reliability(
    scores: Sequence[float] | np.ndarray,
    good: Sequence[bool] | np.ndarray,
    bins: int = ECE_BINS,
) -> list[dict[str, Any]]:
    """The reliability diagram's data: `bins` equal-width bins of the score over [0, 1]
    (the last one closed), each with its count, mean score and share of good items;
    empty bins are listed with n 0 and null means."""
    x = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    y = np.asarray(good, dtype=float)
    if len(x) != len(y):
        raise ValueError("scores and labels differ in length")
    idx = np.minimum((x * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        sel = idx == b
        n = int(sel.sum())
        out.append(
            {
                "lo": round(b / bins, 4),
                "hi": round((b + 1) / bins, 4),
                "n": n,
                "mean_score": finite(x[sel].mean()) if n else None,
                "good_share": finite(y[sel].mean()) if n else None,
            }
        )
    return out


def expected_calibration_error(
    scores: Sequence[float] | np.ndarray,
    good: Sequence[bool] | np.ndarray,
    bins: int = ECE_BINS,
) -> float | None:
    """ECE of the scores read as P(good): sum over `bins` equal-width bins of
    (bin share) x |mean score - share of good items|; None without items."""
    rows = reliability(scores, good, bins)
    total = sum(r["n"] for r in rows)
    if not total:
        return None
    gap = sum(r["n"] * abs(r["mean_score"] - r["good_share"]) for r in rows if r["n"])
    return finite(gap / total)


@dataclass(frozen=True)
class HumanLabel:
    kind: Literal["number", "bool", "band"]
    value: float  # the number, 0/1 for a bool, the band midpoint for a band
    band: str | None  # None for a bool
    cut: float | None = None  # its own good/bad threshold (another judge's scale)

    def good(self, threshold: float) -> bool:
        if self.kind == "bool":
            return self.value >= 0.5
        return self.value >= (threshold if self.cut is None else self.cut)


def parse_human(value: Any) -> HumanLabel:
    """A `labels.human` value as a HumanLabel; ValueError names what is wrong."""
    if isinstance(value, bool):
        return HumanLabel("bool", 1.0 if value else 0.0, None)
    if isinstance(value, int | float):
        v = float(value)
        if not (math.isfinite(v) and 0.0 <= v <= 1.0):
            raise ValueError(f"human score {value!r} is not a number in [0, 1]")
        return HumanLabel("number", v, severity(v))
    if isinstance(value, str) and value.strip().lower() in BAND_MIDPOINTS:
        band = value.strip().lower()
        return HumanLabel("band", BAND_MIDPOINTS[band], band)
    raise ValueError(
        f"human label {value!r} is not a number in [0, 1], a bool or one of {list(BANDS)}"
    )


def _corr(kind: str, x: np.ndarray, y: np.ndarray) -> dict[str, float | None] | None:
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return None  # undefined: too few items or no variation on one side
    from scipy import stats  # lazy (scipy, sklearn): `ragpulse run` imports this package

    res = stats.pearsonr(x, y) if kind == "pearson" else stats.spearmanr(x, y)
    return {"r": finite(res.statistic), "p": finite(res.pvalue)}


def _kappa(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any], **kw: Any) -> float | None:
    from sklearn.metrics import cohen_kappa_score  # type: ignore[import-untyped]

    if not a:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined (0/0) when both use a single label
        return finite(cohen_kappa_score(a, b, labels=list(labels), **kw))


def agreement(
    judge: Sequence[float], human: Sequence[HumanLabel], threshold: float
) -> dict[str, Any]:
    """Agreement of one judge's scores with the human labels of one metric (same order)."""
    if len(judge) != len(human):
        raise ValueError("judge scores and human labels differ in length")
    from sklearn.metrics import accuracy_score, confusion_matrix

    x = np.asarray(judge, dtype=float)
    y = np.asarray([h.value for h in human], dtype=float)
    judge_good = [bool(s >= threshold) for s in x]
    human_good = [h.good(threshold) for h in human]
    graded = [i for i, h in enumerate(human) if h.band is not None]
    judge_bands = [severity(float(x[i])) for i in graded]
    human_bands = [str(human[i].band) for i in graded]
    kinds = sorted({h.kind for h in human})
    out: dict[str, Any] = {
        "n": len(x),
        "label_kinds": kinds,
        "threshold": threshold,
        "judge_mean": finite(x.mean()) if len(x) else None,
        "human_mean": finite(y.mean()) if len(y) else None,
        "pearson": _corr("pearson", x, y),
        "spearman": _corr("spearman", x, y),
        "kappa_binary": _kappa(human_good, judge_good, [False, True]),
        "accuracy": finite(accuracy_score(human_good, judge_good)) if len(x) else None,
        "confusion_binary": _binary_matrix(human_good, judge_good),
        "graded_n": len(graded),
        "kappa_bands": _kappa(human_bands, judge_bands, BANDS),
        "kappa_bands_linear": _kappa(human_bands, judge_bands, BANDS, weights="linear"),
        "accuracy_bands": finite(accuracy_score(human_bands, judge_bands)) if graded else None,
        "confusion_bands": (
            confusion_matrix(human_bands, judge_bands, labels=list(BANDS)).tolist()
            if graded
            else None
        ),
        "mae": finite(float(np.mean(np.abs(x[graded] - y[graded])))) if graded else None,
        # the score read as the probability that the item is good (a calibrated judge's
        # reading) against the human good/bad verdicts: 10 equal-width bins
        "ece": expected_calibration_error(x, human_good),
        "reliability": reliability(x, human_good) if len(x) else None,
    }
    all_graded = bool(human) and len(graded) == len(human)
    out["kappa_kind"] = "bands_linear" if all_graded else "binary"
    out["kappa"] = out["kappa_bands_linear"] if all_graded else out["kappa_binary"]
    return out


def _binary_matrix(human: Sequence[bool], judge: Sequence[bool]) -> dict[str, int] | None:
    from sklearn.metrics import confusion_matrix

    if not human:
        return None
    m = confusion_matrix(human, judge, labels=[True, False])
    return {  # "good" is the positive class: judge says good when the human says good
        "both_good": int(m[0][0]),
        "human_good_judge_bad": int(m[0][1]),
        "human_bad_judge_good": int(m[1][0]),
        "both_bad": int(m[1][1]),
    }


def panel_agreement(
    first: Sequence[float],
    second: Sequence[float],
    threshold: float,
    second_threshold: float | None = None,
) -> dict[str, Any]:
    """Agreement between two judges' scores; the second judge plays the reference.

    Each judge is binarised at its own threshold (`second_threshold`, default the same).
    """
    reference = [
        HumanLabel("number", float(v), severity(float(v)), second_threshold) for v in second
    ]
    out = agreement(first, reference, threshold)
    out["reference_threshold"] = threshold if second_threshold is None else second_threshold
    return out
