"""The `ragpulse calibrate` report: per metric and judge, agreement with the humans."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from monitors.evaluation.calibration import HumanLabel, agreement, panel_agreement

__all__ = ["CALIBRATION_FORMAT", "JudgeScores", "ThresholdFor", "build_calibration"]

CALIBRATION_FORMAT = "ragpulse.calibration/1"

#: one judge: its name and {event_id: {metric: score}}
JudgeScores = tuple[str, Mapping[str, Mapping[str, float]]]
#: the good/bad cut of (metric, judge name)
ThresholdFor = Callable[[str, str], float]


def build_calibration(
    human: Mapping[str, Mapping[str, HumanLabel]],
    judges: Sequence[JudgeScores],
    thresholds: ThresholdFor | Mapping[str, float],
    kappa_target: float = 0.8,
    default_threshold: float = 0.5,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Agreement of each judge with the human labels, and of the first two judges together.

    ``flagged`` lists every (metric, judge) whose headline κ is below the target or
    undefined; ``unscored`` counts human labels the judge produced no score for.
    """
    cut = _threshold_for(thresholds, default_threshold)
    metrics = sorted({m for labels in human.values() for m in labels})
    out_metrics: dict[str, dict[str, Any]] = {}
    flagged: list[dict[str, Any]] = []
    for metric in metrics:
        labelled = [eid for eid, labels in human.items() if metric in labels]
        per_judge: dict[str, Any] = {}
        for name, scores in judges:
            ids = [eid for eid in labelled if metric in scores.get(eid, {})]
            row = agreement(
                [float(scores[eid][metric]) for eid in ids],
                [human[eid][metric] for eid in ids],
                cut(metric, name),
            )
            row["unscored"] = len(labelled) - len(ids)
            kappa = row["kappa"]
            row["below_target"] = kappa is None or kappa < kappa_target
            if row["below_target"]:
                flagged.append({"metric": metric, "judge": name, "kappa": kappa, "n": row["n"]})
            per_judge[name] = row
        out_metrics[metric] = per_judge
    report: dict[str, Any] = {
        "format": CALIBRATION_FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        **dict(extra or {}),
        "kappa_target": kappa_target,
        "judges": [name for name, _ in judges],
        "labelled_events": len(human),
        "metrics": out_metrics,
        "flagged": flagged,
    }
    if len(judges) >= 2:
        report["panel"] = _panel(judges[0], judges[1], metrics, cut)
    return report


def _panel(
    first: JudgeScores,
    second: JudgeScores,
    metrics: Sequence[str],
    cut: ThresholdFor,
) -> dict[str, Any]:
    (a_name, a), (b_name, b) = first, second
    names = sorted(set(metrics) | {m for s in (a, b) for v in s.values() for m in v})
    out: dict[str, Any] = {"judges": [a_name, b_name], "metrics": {}}
    for metric in names:
        ids = [eid for eid in a if metric in a[eid] and metric in b.get(eid, {})]
        if not ids:
            continue
        out["metrics"][metric] = panel_agreement(
            [float(a[eid][metric]) for eid in ids],
            [float(b[eid][metric]) for eid in ids],
            cut(metric, a_name),
            cut(metric, b_name),
        )
    return out


def _threshold_for(thresholds: ThresholdFor | Mapping[str, float], default: float) -> ThresholdFor:
    if callable(thresholds):
        return thresholds
    fixed = dict(thresholds)
    return lambda metric, judge: float(fixed.get(metric, default))
