"""Regressions of a run against a baseline report, with significance tests.

* judge metrics: one-sided Mann-Whitney U (current scores lower than the baseline's);
* failure modes: one-sided Fisher exact test (share of events with the mode higher);
* gates: one-sided Fisher exact test (share of evaluated events failing higher).

p-values are adjusted with Benjamini-Hochberg within each section; a row has
``regressed: true`` only when the adjusted p-value is below ``alpha`` and the effect
points the bad way, so run-to-run noise is not called a regression.

A judge metric whose scores come from different scales in the two runs (another judge,
or the embedded judge calibrated in one run and raw in the other: see
``EventRecord.scale``) is not tested: its row has ``status: "incomparable"`` and both
runs' ``scales``; its means are still shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from monitors.evaluation.records import EventRecord
from monitors.evaluation.stats import bh_adjust, bootstrap_delta_ci, finite

__all__ = ["MIN_SAMPLES", "compare_reports", "compare_scores", "compare_shares"]

MIN_SAMPLES = 5  # per side, for a metric to be tested at all


def compare_scores(current: Sequence[float], baseline: Sequence[float]) -> dict[str, Any]:
    """One metric: means, delta, bootstrap CI of the delta, one-sided Mann-Whitney U p."""
    row: dict[str, Any] = {
        "n": len(current),
        "baseline_n": len(baseline),
        "mean": finite(sum(current) / len(current)) if current else None,
        "baseline_mean": finite(sum(baseline) / len(baseline)) if baseline else None,
    }
    if row["mean"] is not None and row["baseline_mean"] is not None:
        row["delta"] = finite(row["mean"] - row["baseline_mean"])
    if len(current) < MIN_SAMPLES or len(baseline) < MIN_SAMPLES:
        row["status"] = "insufficient_data"
        return row
    from scipy import stats  # lazy: `ragpulse run` imports this package, not scipy

    test = stats.mannwhitneyu(current, baseline, alternative="less")
    p = float(test.pvalue)
    row.update(
        test="mann-whitney-u (one-sided, current < baseline)",
        u=finite(test.statistic),
        p_value=p if math.isfinite(p) else 1.0,
        delta_ci95=bootstrap_delta_ci(current, baseline),
        status="tested",
    )
    return row


def compare_shares(hits: int, n: int, baseline_hits: int, baseline_n: int) -> dict[str, Any]:
    """A bad-outcome share (hits / n) now vs before: one-sided Fisher exact test."""
    row: dict[str, Any] = {
        "count": hits,
        "n": n,
        "baseline_count": baseline_hits,
        "baseline_n": baseline_n,
        "share": finite(hits / n) if n else None,
        "baseline_share": finite(baseline_hits / baseline_n) if baseline_n else None,
    }
    if row["share"] is not None and row["baseline_share"] is not None:
        row["delta"] = finite(row["share"] - row["baseline_share"])
    if n < MIN_SAMPLES or baseline_n < MIN_SAMPLES:
        row["status"] = "insufficient_data"
        return row
    table = [[hits, n - hits], [baseline_hits, baseline_n - baseline_hits]]
    from scipy import stats

    test = stats.fisher_exact(table, alternative="greater")
    row.update(test="fisher-exact (one-sided, share higher)", p_value=float(test.pvalue))
    row["status"] = "tested"
    return row


def _decide(rows: dict[str, dict[str, Any]], alpha: float, worse: str) -> None:
    tested = [name for name, row in rows.items() if row["status"] == "tested"]
    adjusted = bh_adjust([rows[name]["p_value"] for name in tested])
    for name, p_adj in zip(tested, adjusted, strict=True):
        row = rows[name]
        row["p_adjusted"] = float(p_adj)
        delta = row.get("delta") or 0.0
        bad_way = delta < 0 if worse == "lower" else delta > 0
        row["regressed"] = bool(p_adj < alpha and bad_way)
    for row in rows.values():
        row.setdefault("regressed", False)


def _scales(records: Sequence[EventRecord], metric: str) -> list[str]:
    return sorted({s for r in records if metric in r.scores and (s := r.scale(metric))})


def _records(report: Mapping[str, Any]) -> list[EventRecord]:
    return [EventRecord.from_dict(e) for e in report.get("events") or []]


def compare_reports(
    current: Mapping[str, Any], baseline: Mapping[str, Any], alpha: float = 0.05
) -> dict[str, Any]:
    cur, base = _records(current), _records(baseline)
    metrics: dict[str, dict[str, Any]] = {}
    names = sorted({m for r in cur for m in r.scores} | {m for r in base for m in r.scores})
    for metric in names:
        x = [r.scores[metric] for r in cur if metric in r.scores]
        y = [r.scores[metric] for r in base if metric in r.scores]
        row = compare_scores(x, y)
        scales = {"current": _scales(cur, metric), "baseline": _scales(base, metric)}
        if any(scales.values()):
            row["scales"] = scales
        if all(scales.values()) and scales["current"] != scales["baseline"]:
            for key in ("test", "u", "p_value", "delta_ci95"):
                row.pop(key, None)
            row["status"] = "incomparable"
        metrics[metric] = row
    _decide(metrics, alpha, worse="lower")

    modes: dict[str, dict[str, Any]] = {}
    for mode in sorted({m for r in cur + base for m in r.failure_modes}):
        hits = sum(mode in r.failure_modes for r in cur)
        base_hits = sum(mode in r.failure_modes for r in base)
        modes[mode] = compare_shares(hits, len(cur), base_hits, len(base))
    _decide(modes, alpha, worse="higher")

    gates: dict[str, dict[str, Any]] = {}
    for gate in sorted({g for r in cur + base for g in r.gates}):
        judged = [r.gates[gate] for r in cur if r.gates.get(gate) is not None]
        base_judged = [r.gates[gate] for r in base if r.gates.get(gate) is not None]
        row = compare_shares(
            judged.count(False), len(judged), base_judged.count(False), len(base_judged)
        )
        gates[gate] = row  # shares here are *failure* rates of the gate
    _decide(gates, alpha, worse="higher")
    return {
        "baseline_created": baseline.get("created"),
        "baseline_events": len(base),
        "alpha": alpha,
        "correction": "benjamini-hochberg within each section",
        "metrics": metrics,
        "failure_modes": modes,
        "gates": gates,
    }
