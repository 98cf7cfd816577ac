"""Metric qualification in the style of ADAMS: does a judge metric separate good answers
from bad ones, and does it hold still when the answer is only reworded?

* discriminative power: Cohen's d = (mean score of the good answers - mean of the bad
  ones) / pooled standard deviation (n-1 weighted); target d > 0.4;
* rewrite consistency: over the items whose rewrite changed the text,
  VR = Var(score of every changed rewrite) / Var(score of the originals of those items)
  (population variances; an original counts once per changed rewrite). 1.0 when
  rewriting leaves the spread unchanged; with independent rewrite noise of variance s²,
  VR ≈ 1 + s² / Var(originals); target VR < 1.2;
* stability across groups: RMAD = mean(|d_g - mean d|) / |mean d| over the groups
  (services, models) with at least 3 good and 3 bad items.

`build_qualification` makes the `ragpulse qualify` report; `bench.quality.qualification`
uses the same maths on the public data sets.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from monitors.evaluation.rewrites import split_rewrite_id
from monitors.evaluation.stats import finite

__all__ = [
    "D_TARGET",
    "MIN_PER_GROUP",
    "QUALIFICATION_FORMAT",
    "VR_TARGET",
    "build_qualification",
    "cohens_d",
    "discrimination",
    "group_effects",
    "rewrite_stats",
    "rmad",
    "variance_ratio",
]

QUALIFICATION_FORMAT = "ragpulse-qualification/1"
D_TARGET, VR_TARGET = 0.4, 1.2
MIN_PER_GROUP = 3


def cohens_d(good: Sequence[float], bad: Sequence[float]) -> float:
    """Cohen's d with the n-1 weighted pooled SD; NaN with fewer than 2 items a side,
    ±inf when neither side varies."""
    n1, n2 = len(good), len(bad)
    if n1 < 2 or n2 < 2:
        return float("nan")
    pooled = ((n1 - 1) * statistics.variance(good) + (n2 - 1) * statistics.variance(bad)) / (
        n1 + n2 - 2
    )
    diff = statistics.fmean(good) - statistics.fmean(bad)
    return diff / pooled**0.5 if pooled > 0 else float("inf") * (1 if diff > 0 else -1)


def variance_ratio(originals: Sequence[float], rewrites: Sequence[float]) -> float:
    """pvariance(rewrites) / pvariance(originals); NaN when the originals do not vary."""
    base = statistics.pvariance(originals)
    return statistics.pvariance(rewrites) / base if base > 0 else float("nan")


def rewrite_stats(originals: Sequence[float], rewrites: Sequence[float]) -> dict[str, Any]:
    """VR, mean absolute change and mean shift (rewrite - original) of paired scores."""
    if len(originals) < 2:
        return {"n_changed": len(originals), "vr": float("nan")}
    pairs = list(zip(originals, rewrites, strict=True))
    return {
        "n_changed": len(pairs),
        "vr": variance_ratio(originals, rewrites),
        "mean_abs_change": statistics.fmean(abs(a - b) for a, b in pairs),
        "mean_shift": statistics.fmean(b - a for a, b in pairs),
    }


def discrimination(good: Sequence[float], bad: Sequence[float]) -> dict[str, Any]:
    """Counts, means and Cohen's d (None when undefined) of good vs bad scores."""
    return {
        "n_good": len(good),
        "n_bad": len(bad),
        "mean_good": finite(statistics.fmean(good)) if good else None,
        "mean_bad": finite(statistics.fmean(bad)) if bad else None,
        "cohens_d": finite(cohens_d(good, bad)),
    }


def rmad(ds: Sequence[float]) -> float | None:
    """mean(|d_g - mean d|) / |mean d|; None with fewer than 2 values or mean d 0."""
    if len(ds) < 2:
        return None
    mean = statistics.fmean(ds)
    return finite(statistics.fmean(abs(d - mean) for d in ds) / abs(mean)) if mean else None


def group_effects(
    rows: Sequence[tuple[float, bool, str]], min_per_class: int = MIN_PER_GROUP
) -> dict[str, Any]:
    """Per group of (score, good, group) rows: counts and d (None unless the group has
    `min_per_class` good and bad items); RMAD over the groups with a d."""
    groups: dict[str, tuple[list[float], list[float]]] = {}
    for score, good, group in rows:
        groups.setdefault(group, ([], []))[0 if good else 1].append(score)
    per: dict[str, Any] = {}
    ds: list[float] = []
    for name in sorted(groups):
        g, b = groups[name]
        ok = len(g) >= min_per_class and len(b) >= min_per_class
        d = finite(cohens_d(g, b)) if ok else None
        per[name] = {"n_good": len(g), "n_bad": len(b), "cohens_d": d}
        if d is not None:
            ds.append(d)
    value = rmad(ds)
    reason = None
    if len(ds) < 2:
        reason = f"{len(ds)} group(s) with ≥ {min_per_class} good and bad items and a finite d"
    elif value is None:
        reason = "the groups' mean d is 0"
    return {"rmad": value, "rmad_reason": reason, "groups": per}


def _verdict(row: dict[str, Any], min_d: float, max_vr: float) -> None:
    reasons = []
    d, vr = row["cohens_d"], row["variance_ratio"]
    if d is None:
        reasons.append("d undefined (fewer than 2 good or bad items, or no spread)")
    elif d <= min_d:
        reasons.append(f"d {d:.3g} ≤ {min_d:g}")
    if vr is None:
        reasons.append(f"VR unknown: {row['vr_reason']}")
    elif vr >= max_vr:
        reasons.append(f"VR {vr:.3g} ≥ {max_vr:g}")
    row["qualified"] = not reasons
    row["reasons"] = reasons


def _metric(
    metric: str,
    labelled: Mapping[str, tuple[bool, str]],
    scores: Mapping[str, Mapping[str, float]],
    rewrites: Mapping[str, list[str]],
    no_rewrites: str,
) -> dict[str, Any]:
    rows = [
        (scores[i][metric], good, group)
        for i, (good, group) in labelled.items()
        if metric in scores.get(i, {})
    ]
    row = discrimination([s for s, g, _ in rows if g], [s for s, g, _ in rows if not g])
    orig: list[float] = []
    new: list[float] = []
    for i, rw_ids in rewrites.items():
        if labelled[i][0] and metric in scores.get(i, {}):
            for rw in rw_ids:
                if metric in scores.get(rw, {}):
                    orig.append(scores[i][metric])
                    new.append(scores[rw][metric])
    stats = rewrite_stats(orig, new)
    row["variance_ratio"] = finite(stats.pop("vr"))
    row["rewrites"] = {k: finite(v) if isinstance(v, float) else v for k, v in stats.items()}
    row["vr_reason"] = None
    if row["variance_ratio"] is None:
        row["vr_reason"] = (
            no_rewrites
            if not orig
            else "fewer than 2 changed rewrites scored"
            if len(orig) < 2
            else "the originals' scores do not vary"
        )
    row.update(group_effects(rows))
    return row


def build_qualification(
    labelled: Mapping[str, tuple[bool, str]],
    scores: Mapping[str, Mapping[str, float]],
    min_d: float = D_TARGET,
    max_vr: float = VR_TARGET,
    no_rewrites: str = "no rewrite of a good answer was scored",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The qualification report. `labelled`: {event_id: (good, group)}; `scores`:
    {event_id: {metric: score}}, rewrites under `<event_id>~rw<k>`; `no_rewrites`: the
    reason given for a null VR when no rewrite of a good answer has a score."""
    rewrites: dict[str, list[str]] = {}
    for rw in scores:
        parsed = split_rewrite_id(rw)
        if parsed is not None and parsed[0] in labelled:
            rewrites.setdefault(parsed[0], []).append(rw)
    names = sorted({m for i in labelled for m in scores.get(i, {})})
    metrics = {m: _metric(m, labelled, scores, rewrites, no_rewrites) for m in names}
    for row in metrics.values():
        _verdict(row, min_d, max_vr)
    return {
        "format": QUALIFICATION_FORMAT,
        **dict(extra or {}),
        "metrics": metrics,
        "thresholds": {"min_d": min_d, "max_vr": max_vr, "min_per_group": MIN_PER_GROUP},
    }
