"""FaithBench with the embedded judge: what was tried, measured leave-one-batch-out.

Run from the repo root (writes ``bench/results/embedded_faithbench.json``)::

    python -m bench.quality.embedded_faithbench [--cache PATH]

FaithBench has no developer split (``bench.quality.judge_data``: all 400 summaries are
held out) and nothing here is fitted on it for the product. To try measures without
tuning on the data they are measured on — and without tuning on a single batch — every
choice (a threshold, a logistic's weights) is made on 7 of its 8 batch files and applied
to the 8th; the figure is the balanced accuracy (hallucinated = score below the cut) of
the 400 out-of-batch decisions pooled, with the mean and range over the 8 batches.

Measures, all from the claims' cached features (``bench.quality.embedded_score_data``:
no re-encoding):

* ``shipped``: the raw ``faithfulness`` score at the fixed 0.5 (the RAGTruth-dev decision
  point), and the calibrated score (the shipped map) at 0.5;
* ``threshold``: the raw score with the cut chosen on the other batches;
* ``aggregation``: other ways to combine the claims' supports (mean, minimum, soft
  minimum with sharpness 1-30, share of claims under the judge's claim threshold), each
  with its cut chosen on the other batches;
* ``logistic``: a logistic regression (balanced classes) on response-level features
  (soft-min, mean and minimum support, claim count, the most missing numbers / names /
  identifiers in a claim, the lowest similarity and overlap), fitted on the other
  batches, cut at 0.5;
* ``baselines``: the detectors shipped in FaithBench's metadata, score < 0.5.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
from sklearn.metrics import balanced_accuracy_score, roc_auc_score  # type: ignore[import-untyped]

from bench.quality.embedded_score_data import Row, load_rows
from bench.quality.embedded_score_maps import CACHE, RESULTS
from bench.quality.judge_data import faithbench
from monitors.judges.embedded import MiniLMJudge, calibration_sha256, load_calibration
from monitors.judges.score_maps import load_score_maps
from tests.support.datasets.faithbench import BASELINES

CUTS = np.round(np.arange(0.02, 1.0, 0.01), 2)


def _supports(row: Row, weights: np.ndarray) -> np.ndarray:
    if not row.claims:
        return np.array([1.0])
    x = np.array(row.claims, dtype=np.float64)
    z = weights[0] + x @ weights[1:]
    return 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))


def _softmin(values: np.ndarray, beta: float) -> float:
    low = float(values.min())
    return float(low - math.log(float(np.mean(np.exp(-beta * (values - low))))) / beta)


def _features(row: Row, sup: np.ndarray) -> list[float]:
    x = np.array(row.claims or [[1.0, 1.0, 0, 0, 0, 0.0]], dtype=np.float64)
    return [
        row.raw,
        float(sup.mean()),
        float(sup.min()),
        math.log1p(len(row.claims)),
        float(x[:, 2].max()),
        float(x[:, 3].max()),
        float(x[:, 4].max()),
        float(x[:, 0].min()),
        float(x[:, 1].min()),
    ]


def _best_cut(scores: np.ndarray, y_bad: np.ndarray) -> float:
    """The cut (score < cut = hallucinated) with the best balanced accuracy; ties -> the
    one nearest 0.5."""
    best = max((balanced_accuracy_score(y_bad, scores < c), -abs(c - 0.5), float(c)) for c in CUTS)
    return best[2]


def lobo(
    batches: np.ndarray,
    y_bad: np.ndarray,
    decide: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> dict[str, Any]:
    """`decide(train_mask, test_mask)` -> hallucinated? for the test rows; pooled BA."""
    pred = np.zeros(len(y_bad), dtype=bool)
    per: dict[str, float] = {}
    for b in sorted(set(batches)):
        test = batches == b
        pred[test] = decide(~test, test)
        per[b] = round(float(balanced_accuracy_score(y_bad[test], pred[test])), 4)
    return {
        "balanced_accuracy": round(float(balanced_accuracy_score(y_bad, pred)), 4),
        "per_batch_mean": round(float(np.mean(list(per.values()))), 4),
        "per_batch_min": min(per.values()),
        "per_batch_max": max(per.values()),
    }


def run(rows: list[Row]) -> dict[str, Any]:
    fb = sorted(
        (r for r in rows if r.metric == "faithfulness" and r.dataset == "faithbench"),
        key=lambda r: r.item,
    )
    cal = load_calibration()
    weights = np.array(cal["claim"]["weights"], dtype=np.float64)
    judge = MiniLMJudge(score_maps=False)
    maps = load_score_maps(calibration_sha256=calibration_sha256())
    y_bad = np.array([not r.fine for r in fb])
    batches = np.array([r.group for r in fb])
    sups = [_supports(r, weights) for r in fb]
    raw = np.array([r.raw for r in fb])
    calibrated = np.array([maps.calibrate("faithfulness", s) or 0.0 for s in raw])
    out: dict[str, Any] = {"n": len(fb), "hallucinated": int(y_bad.sum())}
    out["batches"] = {b: int((batches == b).sum()) for b in sorted(set(batches))}

    def fixed(scores: np.ndarray, cut: float) -> dict[str, Any]:
        res = lobo(batches, y_bad, lambda tr, te: scores[te] < cut)
        res["roc_auc"] = round(float(roc_auc_score(y_bad, -scores)), 4)
        return res

    def tuned(scores: np.ndarray) -> dict[str, Any]:
        res = lobo(batches, y_bad, lambda tr, te: scores[te] < _best_cut(scores[tr], y_bad[tr]))
        res["roc_auc"] = round(float(roc_auc_score(y_bad, -scores)), 4)
        res["cut_on_all_400_for_reference"] = _best_cut(scores, y_bad)
        return res

    out["shipped"] = {
        "raw_at_0.5": fixed(raw, 0.5),
        "calibrated_at_0.5": fixed(calibrated, 0.5),
        "calibrated_mean": {
            "faithful": round(float(calibrated[~y_bad].mean()), 4),
            "hallucinated": round(float(calibrated[y_bad].mean()), 4),
        },
    }
    out["threshold"] = {"raw": tuned(raw)}
    thr = float(cal["threshold"])
    aggs: dict[str, np.ndarray] = {
        "mean": np.array([s.mean() for s in sups]),
        "min": np.array([s.min() for s in sups]),
        "share_of_claims_supported": np.array([float(np.mean(s >= thr)) for s in sups]),
    }
    for beta in (1.0, 3.0, 10.0, 30.0):
        aggs[f"softmin_beta_{beta:g}"] = np.array([_softmin(s, beta) for s in sups])
    out["aggregation"] = {
        name: tuned(np.array([judge.rescale(v) for v in vals])) for name, vals in aggs.items()
    }
    feats = np.array([_features(r, s) for r, s in zip(fb, sups, strict=True)])

    def logistic(tr: np.ndarray, te: np.ndarray) -> np.ndarray:
        mu, sd = feats[tr].mean(axis=0), feats[tr].std(axis=0) + 1e-9
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)
        model.fit((feats[tr] - mu) / sd, y_bad[tr])
        return np.asarray(model.predict_proba((feats[te] - mu) / sd)[:, 1] >= 0.5)

    out["logistic"] = lobo(batches, y_bad, logistic)
    out["logistic"]["features"] = [
        "raw",
        "mean_support",
        "min_support",
        "log1p_claims",
        "max_missing_numbers",
        "max_missing_names",
        "max_missing_identifiers",
        "min_similarity",
        "min_overlap",
    ]
    meta = {it.id: it.meta for it in faithbench()}
    base: dict[str, Any] = {}
    for name in BASELINES:
        vals = np.array([float(meta[r.item].get(name, np.nan)) for r in fb])
        if np.isnan(vals).any():
            continue
        base[name] = fixed(vals, 0.5)
    out["baselines"] = base
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--json", type=Path, default=RESULTS / "embedded_faithbench.json")
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    result.update(run(load_rows(args.cache, None)))
    text = json.dumps(result, indent=2)
    print(text)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
