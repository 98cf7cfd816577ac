"""Fit the embedded judge's calibration on the DEVELOPER split only.

Run from the repo root (writes ``monitors/judges/embedded_calibration.json``)::

    python -m bench.quality.embedded_fit [--halueval-pairs N] [--out PATH]

* claim weights: a logistic regression (scikit-learn) on claim sentences. RAGTruth dev
  responses give one row per sentence, labelled unsupported when it overlaps a human
  hallucination span; HaluEval dev pairs give the right answer's sentences as supported
  and the hallucinated answer's as unsupported. Each data set carries half the weight,
  classes balanced inside each;
* the soft-min sharpness `beta` and the decision threshold: the values with the best
  response-level ROC AUC and then F1 on RAGTruth dev;
* relevance: a logistic curve on the best cosine, positives = a question with its own
  passages / knowledge, negatives = with another dev item's.

Only ``split == "dev"`` items are read; ``bench.quality.embedded_judge`` reports on the
held-out ``test`` items.

This file defines the judge's *raw* scales. The score maps that calibrate them
(``embedded_score_maps.json``) are pinned to its sha256: after a refit here, run
``python -m bench.quality.embedded_score_maps`` and then ``python -m
bench.judge.gate_floors`` (until then the judge refuses the stale maps).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
from sklearn.metrics import f1_score, roc_auc_score  # type: ignore[import-untyped]

from bench.quality.judge_data import SALT, halueval, ragtruth, sentence_labels
from monitors.judges.embedded import Claim, MiniLMJudge

OUT = Path(__file__).resolve().parents[2] / "monitors" / "judges" / "embedded_calibration.json"
FEATURES = [
    "similarity",
    "overlap",
    "missing_numbers",
    "missing_names",
    "missing_identifiers",
    "log1p_content_words",
]
BETAS = (1.0, 3.0, 10.0, 30.0, 100.0)


def _order(key: str) -> str:
    return hashlib.sha256(f"{SALT}:order:{key}".encode()).hexdigest()


def collect(judge: MiniLMJudge, pairs: int) -> dict[str, Any]:
    rag = [it for it in ragtruth() if it.split == "dev"]
    halu = sorted((it for it in halueval() if it.split == "dev"), key=lambda it: _order(it.id))
    halu = halu[:pairs]
    rag_claims = [judge.claims(it.response, it.contexts) for it in rag]
    rows: list[tuple[list[float], bool, str]] = []
    for it, claims in zip(rag, rag_claims, strict=True):
        labels = sentence_labels(it, [c.text for c in claims])
        rows += [(c.features(), lab, "ragtruth") for c, lab in zip(claims, labels, strict=True)]
    for pair in halu:
        for text, lab in ((pair.right, False), (pair.hallucinated, True)):
            found = judge.claims(text, [pair.knowledge])
            rows += [(c.features(), lab, "halueval") for c in found]
    rel: list[tuple[str, str, bool]] = []
    seen: dict[str, tuple[str, list[str]]] = {}
    for it in rag:
        seen.setdefault(str(it.meta["source_id"]), (it.query, it.contexts))
    groups = list(seen.values()) + [(it.question, [it.knowledge]) for it in halu[:300]]
    for n, (query, ctxs) in enumerate(groups):
        other = groups[(n + 1) % len(groups)][1]
        rel += [(query, c, True) for c in ctxs] + [(query, c, False) for c in other]
    return {"rag": rag, "rag_claims": rag_claims, "rows": rows, "rel": rel, "pairs": len(halu)}


def fit_claims(rows: list[tuple[list[float], bool, str]]) -> list[float]:
    x = np.array([r[0] for r in rows], dtype=np.float64)
    y = np.array([r[1] for r in rows], dtype=bool)
    src = np.array([r[2] for r in rows])
    w = np.zeros(len(rows))
    for name in set(src):
        for cls in (True, False):
            sel = (src == name) & (y == cls)
            w[sel] = 0.25 / max(1, sel.sum())
    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit(x, ~y, sample_weight=w * len(rows))  # target: supported
    return [float(model.intercept_[0]), *map(float, model.coef_[0])]


def fit(judge: MiniLMJudge, pairs: int) -> dict[str, Any]:
    data = collect(judge, pairs)
    weights = fit_claims(data["rows"])
    cal: dict[str, Any] = json.loads(json.dumps(judge.calibration))
    cal["claim"] = {"features": ["bias", *FEATURES], "weights": weights}
    judge.calibration = cal
    y = np.array([it.hallucinated for it in data["rag"]])
    best: tuple[float, float] = (-1.0, BETAS[0])
    for beta in BETAS:
        cal["aggregate"] = {"beta": beta}
        raw = np.array([_raw(judge, c) for c in data["rag_claims"]])
        best = max(best, (float(roc_auc_score(y, -raw)), beta))
    cal["aggregate"] = {"beta": best[1]}
    raw = np.array([_raw(judge, c) for c in data["rag_claims"]])
    cuts = sorted(set(np.round(raw, 4)))
    f1s = [f1_score(y, raw < t + 1e-9, zero_division=0.0) for t in cuts]
    threshold = float(min(0.95, max(0.05, cuts[int(np.argmax(f1s))] + 1e-4)))
    cal["threshold"] = threshold
    rel_x = np.array(
        [judge.similarities(q, [c])[0] for q, c, _ in data["rel"]], dtype=np.float64
    ).reshape(-1, 1)
    rel_y = np.array([lab for _, _, lab in data["rel"]])
    rel = LogisticRegression(C=1.0).fit(rel_x, rel_y)
    cal["relevance"] = {"a": float(rel.coef_[0][0]), "b": float(rel.intercept_[0])}
    cal["version"] = 1
    cal["note"] = (
        "fitted by python -m bench.quality.embedded_fit on the developer split only "
        f"(salted hash '{SALT}'): RAGTruth dev {len(data['rag'])} responses, "
        f"HaluEval dev {data['pairs']} pairs, {len(data['rel'])} relevance pairs"
    )
    cal["dev_fit"] = {
        "claim_rows": len(data["rows"]),
        "ragtruth_dev_response_auc": round(best[0], 4),
        "ragtruth_dev_f1_at_threshold": round(float(max(f1s)), 4),
    }
    return cal


def _raw(judge: MiniLMJudge, claims: list[Claim]) -> float:
    for c in claims:
        c.support = judge.claim_support(c)
    return judge.raw_support(claims) if claims else 1.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--halueval-pairs", type=int, default=1500)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    judge = MiniLMJudge(score_maps=False)  # raw scales only: the maps are refitted after
    cal = fit(judge, args.halueval_pairs)
    args.out.write_text(json.dumps(cal, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(cal, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
