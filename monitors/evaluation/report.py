"""The `ragpulse eval` report as a plain dict (the JSON report; other formats render it).

Layout: see docs/evaluation.md. Every figure is computed from the per-event records,
which the report keeps under ``events`` so a later run can test against it. When a
judged event has reference-based scores (golden/labelled turns), ``reference`` summarises
them apart (`monitors.evaluation.reference_summary`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from monitors.evaluation.gate_summary import summarize_gates
from monitors.evaluation.records import EventRecord, InputStats, JudgeStats
from monitors.evaluation.reference_summary import reference_summary
from monitors.evaluation.regression import compare_reports
from monitors.evaluation.stats import bootstrap_mean_ci, finite
from monitors.metrics.base import SEVERITY_BANDS, severity
from monitors.metrics.gates import GateSettings

__all__ = [
    "EXIT_GATE_FAILED",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "REPORT_FORMAT",
    "build_report",
    "exit_code",
    "failure_mode_summary",
    "metric_summary",
    "records_of",
]

REPORT_FORMAT = "ragpulse.eval/1"
EXIT_OK, EXIT_GATE_FAILED, EXIT_REGRESSION = 0, 3, 4
BANDS = tuple(band for _, band in SEVERITY_BANDS)


def metric_summary(records: Sequence[EventRecord]) -> dict[str, dict[str, Any]]:
    """Per metric: scored count, mean, std, 95 % CI, severity-band counts, not-scored, and
    which judges scored it on which scale (``judges``: per judge, scored and calibrated
    counts: a calibrated embedded score and an LLM judge's score are different scales)."""
    scores: dict[str, list[float]] = {}
    missing: dict[str, Counter[str]] = {}
    judges: dict[str, dict[str, Counter[str]]] = {}
    for r in records:
        for metric, value in r.scores.items():
            scores.setdefault(metric, []).append(value)
            judge = r.judges.get(metric, "unknown")
            tally = judges.setdefault(metric, {}).setdefault(judge, Counter())
            tally["scored"] += 1
            tally["calibrated"] += metric in r.calibrated
        for metric, status in r.not_scored.items():
            missing.setdefault(metric, Counter())[status] += 1
    out: dict[str, dict[str, Any]] = {}
    for metric in sorted(set(scores) | set(missing)):
        values = scores.get(metric, [])
        bands = Counter(severity(v) for v in values)
        x = np.asarray(values, dtype=float)
        out[metric] = {
            "scored": len(values),
            "mean": finite(x.mean()) if len(x) else None,
            "std": finite(x.std(ddof=1)) if len(x) > 1 else None,
            "ci95": bootstrap_mean_ci(values),
            "bands": {band: bands.get(band, 0) for band in BANDS},
            "skipped": missing.get(metric, Counter())["skipped"],
            "judge_error": missing.get(metric, Counter())["judge_error"],
            "judges": {
                judge: {"scored": t["scored"], "calibrated": t["calibrated"]}
                for judge, t in sorted(judges.get(metric, {}).items())
            },
        }
    return out


def failure_mode_summary(records: Sequence[EventRecord]) -> dict[str, dict[str, Any]]:
    counts = Counter(mode for r in records for mode in set(r.failure_modes))
    n = len(records)
    return {
        mode: {"count": count, "share": finite(count / n) if n else None}
        for mode, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    }


def _categories(
    records: Sequence[EventRecord], gates: GateSettings, floors: Mapping[str, float]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[EventRecord]] = {}
    for r in records:
        if r.category is not None:
            groups.setdefault(str(r.category), []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(groups):
        group = groups[name]
        summary = metric_summary(group)
        tiers = summarize_gates(group, gates, floors)
        out[name] = {
            "events": len(group),
            "failure_modes": failure_mode_summary(group),
            "metrics": {m: {"scored": s["scored"], "mean": s["mean"]} for m, s in summary.items()},
            "gates": {
                g: {"evaluated": t["evaluated"], "pass_rate": t["pass_rate"]}
                for g, t in tiers.items()
            },
        }
    return out


def build_report(
    records: Sequence[EventRecord],
    input_stats: InputStats,
    judge_stats: JudgeStats,
    gates: GateSettings,
    floors: Mapping[str, float],
    critical: Collection[str] = ("critical",),
    baseline: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
    extra: Mapping[str, Any] | None = None,
    fail_on_regression: bool = False,
) -> dict[str, Any]:
    """The whole report; ``exit.code`` is the process's exit code (see `exit_code`):
    3 when a critical gate failed, 4 on a regression when ``fail_on_regression``, else 0.
    """
    tiers = summarize_gates(records, gates, floors, critical)
    metrics = metric_summary(records)
    reference = reference_summary(records, metrics)  # None without reference-based scores
    report: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        **dict(extra or {}),
        "input": input_stats.to_dict(),
        "judge": judge_stats.to_dict(),
        "metrics": metrics,
        "gates": tiers,
        "failure_modes": failure_mode_summary(records),
        "categories": _categories(records, gates, floors),
        **({"reference": reference} if reference is not None else {}),
        "events": [r.to_dict() for r in records],
    }
    if baseline is not None:
        report["regressions"] = compare_reports(report, baseline, alpha)
    failed = [g for g, t in tiers.items() if t["critical"] and t["status"] == "fail"]
    regressed = _regressed(report.get("regressions"))
    report["exit"] = {"failed_gates": failed, "regressions": regressed}
    report["exit"]["code"] = exit_code(report, fail_on_regression)
    return report


def _regressed(regressions: Mapping[str, Any] | None) -> list[str]:
    if not regressions:
        return []
    found: list[str] = []
    for section in ("metrics", "failure_modes", "gates"):
        for name, row in (regressions.get(section) or {}).items():
            if row.get("regressed"):
                found.append(f"{section}:{name}")
    return found


def exit_code(report: Mapping[str, Any], fail_on_regression: bool = False) -> int:
    """3 when a critical gate failed, else 4 when asked to fail on regressions and one
    was found, else 0."""
    verdict = report["exit"]
    if verdict["failed_gates"]:
        return EXIT_GATE_FAILED
    if fail_on_regression and verdict["regressions"]:
        return EXIT_REGRESSION
    return EXIT_OK


def records_of(report: Mapping[str, Any]) -> list[EventRecord]:
    """The per-event records a JSON report keeps (for baselines)."""
    events: Iterable[dict[str, Any]] = report.get("events") or []
    return [EventRecord.from_dict(e) for e in events]
