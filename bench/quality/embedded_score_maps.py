"""Fit the embedded judge's score maps (raw score -> P(the turn is fine)) on the DEV split.

Run from the repo root (writes ``monitors/judges/embedded_score_maps.json``, the results
``bench/results/embedded_score_maps.json`` and reliability diagrams
``bench/results/reliability_<metric>.png``)::

    python -m bench.quality.embedded_score_maps [--cache PATH] [--folds 5] [--dry-run]

Rows come from ``bench.quality.embedded_score_data`` (raw metric scores, cached on disk).
Per metric, a map is fitted on the ``dev`` rows of the data sets in :data:`SPECS` only;
``test`` rows are never used for fitting or for choosing anything, only reported.

* **Method: Platt scaling** — a logistic regression of the label on the raw score
  (scikit-learn, here only), shipped as a 101-point grid that the judge interpolates
  linearly (numpy). It is strictly increasing, so every data set keeps exactly the
  ranking (ROC AUC) of the raw score. Isotonic regression was the other candidate; its
  figures are reported beside (``candidates``): on ``faithfulness`` its out-of-fold ECE
  on RAGTruth dev is about as good, but its flat steps and flat ends tie scores (HaluEval
  test AUC 0.96 -> 0.84 plain, 0.90 with block-centred interpolation: HaluEval's right
  answers score above RAGTruth's whole range) and its top block reads P(fine) = 1.0 from
  33 responses.
* **Which data.** ``faithfulness`` (and ``hallucination``, the same support score) is
  fitted on RAGTruth dev alone: RAGTruth and HaluEval disagree on what a raw score means
  (raw 0.6-0.7: 98 % of RAGTruth dev responses are faithful, 0 % of HaluEval dev answers,
  whose right answers are short phrases copied from the knowledge), so a pooled map is
  calibrated on neither (reported under ``populations``); RAGTruth — several-sentence
  answers of real LLMs to retrieval questions, human labels, 12 % hallucinated — is the
  one closest to a RAG service's traffic. FaithBench has no dev split (it is all held
  out), so it is never fitted on. The relevance metrics are fitted on RAGTruth and
  HaluEval dev together, each data set carrying half the weight; ``context_relevance``
  one chunk at a time (the metric maps each chunk's relevance and averages them, as the
  LLM path averages its chunk ratings: the expected share of on-topic chunks).
* **Out-of-fold.** The dev rows are cut into `folds` folds by a salted hash of their
  group (RAGTruth: source; HaluEval: question); each fold is predicted by a map fitted
  on the others. ECE (10 equal-width bins), Brier score and ROC AUC are reported per data
  set before (the raw score read as a probability) and after, out-of-fold on dev and with
  the final map on test.

``citation_accuracy`` (no labelled citations), ``source_policy_usage`` (no labelled
restricted chunks) and ``citation_coverage`` (a lexical share, not a judge score) are
left on their own scale and listed under ``uncalibrated``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression  # type: ignore[import-untyped]
from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
from sklearn.metrics import brier_score_loss, roc_auc_score  # type: ignore[import-untyped]

from bench.quality.embedded_score_data import Row, load_rows
from bench.quality.judge_data import SALT, judge_fingerprint
from monitors.evaluation.calibration import expected_calibration_error, reliability
from monitors.judges.embedded import MiniLMJudge, calibration_sha256, load_calibration
from monitors.judges.score_maps import SCORE_MAPS_FORMAT, ScoreMap

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "monitors" / "judges" / "embedded_score_maps.json"
RESULTS = ROOT / "bench" / "results"
CACHE = Path("/tmp/ragpulse-embedded-score-rows.json")
GRID = np.round(np.linspace(0.0, 1.0, 101), 2)
FOLD_SALT = f"{SALT}:score-maps"
DATASETS = ("ragtruth", "halueval", "faithbench")

#: metric -> the data sets whose dev rows fit its map
SPECS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("ragtruth",),
    "answer_relevance": ("ragtruth", "halueval"),
    "context_relevance": ("ragtruth", "halueval"),
}
#: metrics that use another metric's map (the same raw score)
SAME_AS = {"hallucination": "faithfulness"}
#: metrics whose map applies to each chunk's relevance; the metric is the mean over chunks
PER_CHUNK = frozenset({"context_relevance"})
UNCALIBRATED = {
    "citation_accuracy": "no labelled data with citations: the support of a cited sentence "
    "by the chunks it cites has no labelled examples (only sentence support by all "
    "passages, a different question); raw support scale, floor at the 5 % quantile of "
    "supported RAGTruth dev sentences",
    "source_policy_usage": "no labelled data with quote_only / no_use chunks; not gated "
    "with the embedded judge",
    "citation_coverage": "lexical share of factual sentences carrying a marker, not a "
    "judge score (no map needed: it is a count)",
}


def fold_of(group: str, folds: int) -> int:
    return int(hashlib.sha256(f"{FOLD_SALT}:{group}".encode()).hexdigest(), 16) % folds


def _weights(rows: list[Row]) -> np.ndarray:
    """Each data set carries the same total weight (mean weight 1)."""
    names = [r.dataset for r in rows]
    sets = sorted(set(names))
    count = {n: names.count(n) for n in sets}
    return np.array([len(rows) / (len(sets) * count[n]) for n in names])


def fit_platt(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """P(fine) = sigmoid(a * raw + b); a > 0 or ValueError (the map must keep the order)."""
    model = LogisticRegression(C=1e4, max_iter=1000)
    model.fit(x.reshape(-1, 1), y, sample_weight=w)
    a, b = float(model.coef_[0][0]), float(model.intercept_[0])
    if a <= 0:
        raise ValueError(f"Platt slope {a:.3f} <= 0: the raw score does not rank the labels")
    return a, b


def platt_map(a: float, b: float) -> ScoreMap:
    y = 1.0 / (1.0 + np.exp(-(a * GRID + b)))
    return ScoreMap(tuple(map(float, GRID)), tuple(round(float(v), 6) for v in y))


def fit_isotonic(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> ScoreMap:
    """Isotonic regression through its block midpoints (the candidate not shipped)."""
    model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    model.fit(x, y, sample_weight=w)
    xs, ys = np.asarray(model.X_thresholds_), np.asarray(model.y_thresholds_)
    cx: list[float] = []
    cy: list[float] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and ys[j + 1] == ys[i]:
            j += 1
        cx.append(float(np.clip((xs[i] + xs[j]) / 2, 0.0, 1.0)))
        cy.append(float(np.clip(ys[i], 0.0, 1.0)))
        i = j + 1
    if len(cx) == 1:
        cx, cy = [0.0, 1.0], [cy[0], cy[0]]
    keep = [0, *[k for k in range(1, len(cx)) if cx[k] > cx[k - 1]]]
    return ScoreMap(tuple(cx[k] for k in keep), tuple(cy[k] for k in keep))


@cache
def _relevance_curve() -> tuple[float, float]:
    rel = load_calibration()["relevance"]
    return float(rel["a"]), float(rel["b"])


def _chunks(row: Row) -> list[float]:
    """A context_relevance row's per-chunk raw relevances (the judge's logistic)."""
    a, b = _relevance_curve()
    return [float(1.0 / (1.0 + np.exp(-(a * s + b)))) for s in row.sims]


def _units(metric: str, rows: list[Row]) -> list[Row]:
    """What a map is fitted on: one row per chunk for ``context_relevance`` (the metric
    maps each chunk, then averages), the rows themselves otherwise."""
    if metric not in PER_CHUNK:
        return rows
    return [replace(r, raw=v, sims=[]) for r in rows for v in _chunks(r)]


def predict(metric: str, fmap: ScoreMap, rows: list[Row]) -> np.ndarray:
    """The calibrated metric scores of `rows` (per chunk, then the mean, where the metric
    does so)."""
    if metric not in PER_CHUNK:
        return fmap.apply([r.raw for r in rows])
    return np.array([float(np.mean(fmap.apply(_chunks(r)))) for r in rows])


def _fit(method: str, rows: list[Row]) -> tuple[ScoreMap, dict[str, float]]:
    x = np.array([r.raw for r in rows])
    y = np.array([r.fine for r in rows])
    w = _weights(rows)
    if method == "platt":
        a, b = fit_platt(x, y, w)
        return platt_map(a, b), {"a": round(a, 6), "b": round(b, 6)}
    return fit_isotonic(x, y, w), {}


def measure(p: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    both = 0 < y.sum() < len(y)
    return {
        "ece": expected_calibration_error(p, y),
        "brier": round(float(brier_score_loss(y, np.clip(p, 0, 1))), 6),
        "auc": round(float(roc_auc_score(y, p)), 6) if both else None,
        "mean": round(float(np.mean(p)), 6),
        "reliability": reliability(p, y),
    }


def _pair(raw: np.ndarray, cal: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    return {
        "n": len(y),
        "fine_share": round(float(np.mean(y)), 4),
        "before": measure(raw, y),
        "after": measure(cal, y),
    }


def evaluate(
    rows: list[Row], metric: str, fit_on: tuple[str, ...], method: str, folds: int
) -> dict[str, Any]:
    """Out-of-fold figures on dev (data sets fitted on), and the final map on test (and
    on the dev rows of data sets it was not fitted on)."""
    mine = [r for r in rows if r.metric == metric]
    dev = [r for r in mine if r.split == "dev" and r.dataset in fit_on]
    oof = np.zeros(len(dev))
    fold = np.array([fold_of(r.group, folds) for r in dev])
    for k in range(folds):
        train = [r for r, f in zip(dev, fold, strict=True) if f != k]
        fmap, _ = _fit(method, _units(metric, train))
        held = fold == k
        oof[held] = predict(metric, fmap, [r for r, h in zip(dev, held, strict=True) if h])
    final, params = _fit(method, _units(metric, dev))
    out: dict[str, Any] = {"method": method, "fit_on": list(fit_on), "params": params}
    out["dev_rows"] = len(dev)
    out["unit"] = "chunk" if metric in PER_CHUNK else "metric score"
    out["fit_rows"] = len(_units(metric, dev))
    out["out_of_fold"] = {}
    for ds in fit_on:
        sel = np.array([r.dataset == ds for r in dev])
        raw = np.array([r.raw for r in dev])[sel]
        y = np.array([r.fine for r in dev])[sel]
        out["out_of_fold"][ds] = _pair(raw, oof[sel], y)
        aucs = [
            (roc_auc_score(y[f], raw[f]), roc_auc_score(y[f], oof[sel][f]))
            for f in (fold[sel] == k for k in range(folds))
            if 0 < y[f].sum() < f.sum()
        ]
        out["out_of_fold"][ds]["auc_within_folds"] = {
            "before": round(float(np.mean([a for a, _ in aucs])), 6),
            "after": round(float(np.mean([b for _, b in aucs])), 6),
        }
    out["test"] = {}
    out["dev_not_fitted"] = {}
    for ds in DATASETS:
        for split, key in (("test", "test"), ("dev", "dev_not_fitted")):
            if split == "dev" and ds in fit_on:
                continue
            part = [r for r in mine if r.dataset == ds and r.split == split]
            if not part:
                continue
            raw = np.array([r.raw for r in part])
            y = np.array([r.fine for r in part])
            out[key][ds] = _pair(raw, predict(metric, final, part), y)
    out["map"] = final
    return out


def populations(rows: list[Row], metric: str, folds: int) -> dict[str, Any]:
    """ECE of maps fitted on each data set alone and pooled (why `SPECS` fits what)."""
    out: dict[str, Any] = {}
    sets = sorted({r.dataset for r in rows if r.metric == metric and r.split == "dev"})
    for fit_on in [(s,) for s in sets] + ([tuple(sets)] if len(sets) > 1 else []):
        res = evaluate(rows, metric, fit_on, "platt", folds)
        out["+".join(fit_on)] = {
            "out_of_fold_ece": {k: v["after"]["ece"] for k, v in res["out_of_fold"].items()},
            "test_ece": {k: v["after"]["ece"] for k, v in res["test"].items()},
        }
    return out


def _strip(res: dict[str, Any]) -> dict[str, Any]:
    """The figures without the reliability bins (for the candidates' summary)."""
    out = {}
    for section in ("out_of_fold", "test"):
        out[section] = {
            ds: {
                side: {k: v for k, v in row[side].items() if k != "reliability"}
                for side in ("before", "after")
            }
            for ds, row in res[section].items()
        }
    return out


def plot(metric: str, res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(f"{ds} dev, out-of-fold", row) for ds, row in res["out_of_fold"].items()]
    panels += [(f"{ds} dev (not fitted on)", row) for ds, row in res["dev_not_fitted"].items()]
    panels += [(f"{ds} test", row) for ds, row in res["test"].items()]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.6), squeeze=False)
    for ax, (title, row) in zip(axes[0], panels, strict=True):
        ax.plot([0, 1], [0, 1], color="0.7", lw=1, ls="--")
        for side, color, label in (("before", "tab:red", "raw"), ("after", "tab:blue", "calib.")):
            bins = [b for b in row[side]["reliability"] if b["n"]]
            xs = [b["mean_score"] for b in bins]
            ys = [b["good_share"] for b in bins]
            sizes = [12 + 120 * b["n"] / row["n"] for b in bins]
            ax.plot(xs, ys, color=color, lw=1.2)
            ax.scatter(xs, ys, s=sizes, color=color, alpha=0.7)
            ax.plot([], [], color=color, label=f"{label} ECE {row[side]['ece']:.3f}")
        ax.set_title(f"{title}\nn={row['n']}, fine {row['fine_share']:.0%}", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("mean score in bin")
        ax.legend(loc="lower right", fontsize=8)
    axes[0][0].set_ylabel("share fine (labels)")
    fig.suptitle(f"embedded-minilm-v1 {metric}: reliability, 10 equal-width bins", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def maps_file(results: dict[str, dict[str, Any]], folds: int) -> dict[str, Any]:
    maps: dict[str, Any] = {}
    for metric, res in results.items():
        fmap: ScoreMap = res["map"]
        test = {ds: row["after"]["ece"] for ds, row in res["test"].items()}
        maps[metric] = {
            "x": list(fmap.x),
            "y": list(fmap.y),
            "applies_to": "each chunk's relevance (the metric is their mean)"
            if metric in PER_CHUNK
            else "the metric's raw score",
            "fit": {"method": res["method"], **res["params"]},
            "fitted_on": f"dev split of {' + '.join(res['fit_on'])} ({res['fit_rows']} rows)",
            "ece_out_of_fold": {ds: r["after"]["ece"] for ds, r in res["out_of_fold"].items()},
            "ece_test": test,
        }
    for metric, other in SAME_AS.items():
        maps[metric] = {"same_as": other}
    return {
        "format": SCORE_MAPS_FORMAT,
        "version": 1,
        "judge": MiniLMJudge.name,
        "meaning": "score = the probability that the turn is fine (no hallucination / on "
        "topic), read off the judge's raw score; calibrated on the data sets named",
        "note": (
            "fitted by python -m bench.quality.embedded_score_maps on the developer split "
            f"only (salted hash '{SALT}'); Platt scaling, {folds}-fold out-of-fold figures "
            "in bench/results/embedded_score_maps.json"
        ),
        "raw_scale": {
            "calibration_sha256": calibration_sha256(),
            "judge_code": judge_fingerprint(raw=True),
        },
        "maps": maps,
        "uncalibrated": UNCALIBRATED,
    }


def dumps(data: dict[str, Any]) -> str:
    """JSON with each list of numbers on one line (the breakpoints stay readable)."""
    text = json.dumps(data, indent=2)

    def one_line(m: re.Match[str]) -> str:
        return "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]"

    return re.sub(r"\[\s*(-?[0-9.e+-]+(?:,\s*-?[0-9.e+-]+)*)\s*\]", one_line, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--halueval-pairs", type=int, default=None, help="per split; all if unset")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--dry-run", action="store_true", help="do not write the maps file")
    args = ap.parse_args(argv)
    started = time.monotonic()
    rows = load_rows(args.cache, args.halueval_pairs)
    results: dict[str, dict[str, Any]] = {}
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "judge": MiniLMJudge.name,
        "raw_judge_code": judge_fingerprint(raw=True),
        "folds": args.folds,
        "ece_bins": 10,
        "metrics": {},
    }
    for metric, fit_on in SPECS.items():
        res = evaluate(rows, metric, fit_on, "platt", args.folds)
        iso = evaluate(rows, metric, fit_on, "isotonic", args.folds)
        results[metric] = res
        png = args.results / f"reliability_{metric}.png"
        plot(metric, res, png)
        entry = {k: v for k, v in res.items() if k != "map"}
        entry["diagram"] = str(png.relative_to(ROOT)) if png.is_relative_to(ROOT) else str(png)
        entry["candidates"] = {"isotonic": _strip(iso)}
        entry["populations"] = populations(rows, metric, args.folds)
        report["metrics"][metric] = entry
        oof = {ds: (r["before"]["ece"], r["after"]["ece"]) for ds, r in res["out_of_fold"].items()}
        test = {ds: (r["before"]["ece"], r["after"]["ece"]) for ds, r in res["test"].items()}
        print(f"{metric}: ECE out-of-fold {oof}; test {test}", flush=True)
    report["same_as"] = SAME_AS
    report["uncalibrated"] = UNCALIBRATED
    data = maps_file(results, args.folds)
    report["maps"] = data["maps"]
    report["seconds"] = round(time.monotonic() - started, 1)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "embedded_score_maps.json").write_text(
        json.dumps(report, indent=2) + "\n", encoding="utf-8"
    )
    if not args.dry_run:
        args.out.write_text(dumps(data) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
