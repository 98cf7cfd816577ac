"""`ragpulse weights fit`: non-negative weights of a compound judge score fitted on the
human verdicts (`labels.human.overall`), its out-of-fold AUC against the plain mean of
the same metrics, and the settings snippet (`judge.compound.weights`) to ship them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from monitors.evaluation.compound import auc, bootstrap_ci, fit_logistic, normalise, oof_auc
from stream.commands.args import InputError, eprint
from stream.commands.eval_run import read_lines
from stream.commands.qualify_run import load_labelled, scores_for
from stream.runtime.settings import ConfigError, Settings

__all__ = ["WEIGHTS_FORMAT", "default_metrics", "fit_report", "run_weights_fit", "settings_snippet"]

WEIGHTS_FORMAT = "ragpulse-weights/1"
EXIT_USAGE = 2
MIN_COVERAGE = 0.8  #: default metrics: scored on at least this share of the labelled rows


def default_metrics(rows: Sequence[Mapping[str, float]]) -> list[str]:
    """Every metric scored on ≥ 80 % of `rows`, sorted."""
    counts: dict[str, int] = {}
    for row in rows:
        for metric in row:
            counts[metric] = counts.get(metric, 0) + 1
    return sorted(m for m, c in counts.items() if rows and c / len(rows) >= MIN_COVERAGE)


def settings_snippet(weights: Mapping[str, float]) -> str:
    """The YAML the sidecar reads (`judge.compound.weights`)."""
    lines = ["judge:", "  compound:", "    weights:"]
    lines += [f"      {metric}: {w:.3f}" for metric, w in weights.items()]
    return "\n".join(lines) + "\n"


def _ci(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [round(value[0], 6), round(value[1], 6)]


def _matrix(
    ids: Sequence[str], scores: Mapping[str, Mapping[str, float]], metrics: Sequence[str]
) -> list[str]:
    return [i for i in ids if all(m in scores.get(i, {}) for m in metrics)]


def fit_report(
    x: np.ndarray, y: np.ndarray, metrics: Sequence[str], args: argparse.Namespace
) -> dict[str, Any]:
    """The `ragpulse-weights/1` document of the rows `x` (metrics in columns), `y` 1 good."""
    raw, _ = fit_logistic(x, y)
    weights = normalise(raw)
    note = None
    if weights is None:
        weights = np.full(len(metrics), 1.0 / len(metrics))
        note = "the fit gave every metric weight 0 (none separates good from bad): equal weights"
    compound, pred = oof_auc(x, y, args.folds, args.seed)
    mean = x.mean(axis=1)
    report: dict[str, Any] = {
        "format": WEIGHTS_FORMAT,
        "weights": {m: round(float(w), 6) for m, w in zip(metrics, weights, strict=True)},
        "auc": {
            "compound": round(compound, 6),
            "mean": round(auc(y, mean), 6),
            "compound_ci": _ci(bootstrap_ci(y, pred, args.bootstrap, args.seed)),
            "mean_ci": _ci(bootstrap_ci(y, mean, args.bootstrap, args.seed)),
        },
        "n": len(y),
        "n_good": int(y.sum()),
        "n_bad": int(len(y) - y.sum()),
        "folds": args.folds,
        "metrics": list(metrics),
        "input": args.input,
    }
    if note:
        report["note"] = note
    return report


def _select(
    args: argparse.Namespace, ids: Sequence[str], scores: Mapping[str, Mapping[str, float]]
) -> list[str]:
    rows = [scores.get(i, {}) for i in ids]
    if not args.metrics:
        metrics = default_metrics(rows)
        if not metrics:
            raise InputError("no metric is scored on 80 % of the labelled events")
        return metrics
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    missing = [m for m in metrics if not any(m in row for row in rows)]
    if missing or not metrics:
        raise InputError(f"--metrics: no labelled event has a score of {missing or 'any'}")
    return list(dict.fromkeys(metrics))


def run_weights_fit(settings: Settings, args: argparse.Namespace) -> int:
    try:
        if args.bootstrap < 0:
            raise InputError("--bootstrap must be ≥ 0")
        labelled = load_labelled(read_lines(args.input), settings.limits)
        if not labelled.events:
            raise InputError(f"{args.input}: no event carries labels.human.overall")
        judge, scores = scores_for(settings, args.judge, args.scores, labelled.events)
        ids = [e.event_id for e in labelled.events]
        metrics = _select(args, ids, scores)
        kept = _matrix(ids, scores, metrics)
        y = np.array([1 if labelled.good[i] else 0 for i in kept])
        n_good, n_bad = int(y.sum()), int(len(y) - y.sum())
        if min(n_good, n_bad) < args.folds:
            raise InputError(
                f"{args.folds} folds need at least {args.folds} good and {args.folds} bad "
                f"events with every metric scored; have {n_good} good, {n_bad} bad"
            )
    except (InputError, ConfigError) as exc:
        eprint(f"ragpulse weights fit: {exc}")
        return EXIT_USAGE
    x = np.array([[scores[i][m] for m in metrics] for i in kept], dtype=float)
    report = fit_report(x, y, metrics, args)
    try:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        eprint(f"ragpulse weights fit: cannot write {args.output}: {exc.strerror}")
        return EXIT_USAGE
    eprint(
        f"ragpulse weights fit: judge {judge}; {len(kept)} rows ({n_good} good, {n_bad} bad); "
        f"{len(ids) - len(kept)} labelled rows left out (a metric missing), "
        f"{labelled.n_unlabelled} events without labels.human.overall ignored; "
        f"AUC compound {report['auc']['compound']:.3f} (out of fold) vs mean "
        f"{report['auc']['mean']:.3f}; wrote {args.output}"
    )
    if "note" in report:
        eprint(f"ragpulse weights fit: {report['note']}")
    print(settings_snippet(report["weights"]), end="")
    return 0
