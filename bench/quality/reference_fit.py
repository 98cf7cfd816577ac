"""Fit the embedded judge's answer-correctness model on the TruthfulQA developer split.

Run from the repo root::

    python -m bench.quality.reference_fit [--write] [--json PATH]

Features come from the shipped judge itself (``MiniLMJudge.align``: the features do not
depend on the weights). A plain logistic regression (scikit-learn, L2, C=1) is fitted on
the ``dev`` split only; the ``test`` split is never read here (measure it with
``python -m bench.quality.reference_eval --split test``). ``--write`` stores the weights
and the intercept in ``monitors/judges/embedded_reference.json``; without it the script
only prints the dev figures (in-sample and 5-fold out-of-fold AUC per feature set).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from monitors.judges.embedded import MiniLMJudge
from monitors.judges.reference_alignment import FEATURES
from tests.support.datasets import DATA, adapt

MODEL = Path(__file__).resolve().parents[2] / "monitors" / "judges" / "embedded_reference.json"


def dev_matrix(judge: MiniLMJudge) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, question ids) of the TruthfulQA dev events."""
    rows, ys, groups = [], [], []
    for raw in adapt("truthfulqa", "dev", DATA):
        labels = raw["labels"]
        found = judge.align(raw["response"], labels["expected_answer"], raw["query"])
        rows.append([found.features[f] for f in FEATURES])
        ys.append(1 if labels["human"]["overall"] else 0)
        groups.append(labels["pair"])
    return np.array(rows), np.array(ys), np.array(groups)


def fit(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold, cross_val_predict

    model = LogisticRegression(C=1.0, max_iter=2000)
    oof = cross_val_predict(model, x, y, groups=groups, cv=GroupKFold(5), method="predict_proba")[
        :, 1
    ]
    model.fit(x, y)
    single = {f: round(float(roc_auc_score(y, x[:, i])), 4) for i, f in enumerate(FEATURES)}
    return {
        "weights": {f: round(float(w), 4) for f, w in zip(FEATURES, model.coef_[0], strict=True)},
        "intercept": round(float(model.intercept_[0]), 4),
        "dev_auc_in_sample": round(float(roc_auc_score(y, model.predict_proba(x)[:, 1])), 4),
        "dev_auc_out_of_fold": round(float(roc_auc_score(y, oof)), 4),
        "single_feature_auc": single,
        "n": len(y),
        "questions": len(set(groups.tolist())),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="store the fit in the judge's model")
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args(argv)
    start = time.perf_counter()
    judge = MiniLMJudge()
    x, y, groups = dev_matrix(judge)
    result = fit(x, y, groups)
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.write:
        model = json.loads(MODEL.read_text(encoding="utf-8"))
        model["weights"], model["intercept"] = result["weights"], result["intercept"]
        model["fitted_on"] = (
            f"TruthfulQA dev split ({result['questions']} questions, {result['n']} answers), "
            f"logistic regression C=1; 5-fold out-of-fold dev AUC {result['dev_auc_out_of_fold']}"
        )
        MODEL.write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {MODEL}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
