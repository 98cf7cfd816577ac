"""Fit the ``deflection`` detector's model and measure it per held-out model family.

Run from the repo root (about a minute; needs ../shared/datasets)::

    python -m bench.quality.deflection_fit [--data DIR] [--write] [--json PATH]

Data: XSTest v2's three model families (gpt4, llama2new, mistralinstruct; gold = the
humans' full or partial refusal) and the blind training set
``bench/quality/blind_deflection_train`` (301 turns written from the definitions only;
gold = refusal or deflection). The held-out blind set ``bench/quality/blind_deflection``
is never read here.

Features: static token vectors distilled from the bundled all-MiniLM-L6-v2 (every
vocabulary token through the int8 ONNX encoder alone, mean-pooled, then centred: the
model2vec recipe without its PCA), averaged over the WordPiece tokens of the response's
first ``HEAD_CHARS`` characters. A class-balanced, L2-regularised logistic regression
(scipy L-BFGS) on them folds, being linear in a mean, into one weight per token.

Held-out figures (nested, prompt-disjoint): for each family H, the L2 strength and the
decision threshold are chosen on the two other families alone (each in turn held out
from the other, the blind training set always in training); then a model trained on the
two others and the blind set is scored on H. The same 450 prompts appear in every family,
so the prompts are split in 5 folds by a hash of their id and a prediction for a fold-k
prompt of H comes from a model that saw no fold-k prompt of any family. A prediction is
stage 1 (the ``refusal`` detector, category ``refusal``) OR the gate AND the model, as the
sidecar runs them. Baselines on the same rows: XSTest's string match, its GPT-4 judge
labels, stage 1 alone.

``--write``: the shipped model, fitted on all three families and the blind training set
with the (L2, threshold) of the best mean held-out F1, written to
``detectors/models/deflection.json`` (int8 weights, tokenizer sha256, fingerprint).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from bench.quality.xstest_refusal import _event
from detectors._deflection_model import FORMAT, fingerprint
from detectors._wordpiece import WordPieces, load_tokenizer
from detectors.deflection import DeflectionDetector, Gate, gate_cues
from detectors.refusal import RefusalDetector
from tests.support.datasets import DATA, xstest
from tests.support.datasets.common import event
from tests.support.datasets.xstest import MODELS, is_refusal

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "bench/quality/blind_deflection_train/turns.jsonl"
MODEL = ROOT / "detectors/models/deflection.json"
RESULTS = ROOT / "bench/results/deflection_fit.json"
HEAD_CHARS = 300
SHORT_CHARS = 200
MIN_WORDS = 3
L2S = (0.01, 0.03, 0.1, 0.3)
THRESHOLDS = (0.0, 0.5, 1.0, 1.5)  # logits
FOLDS = 5

Rows = dict[str, Any]


def load(data: Path) -> dict[str, Rows]:
    """Per family (and "blind_train"): queries, responses, gold, baselines, stage 1."""
    refusal = RefusalDetector()
    out: dict[str, Rows] = {}
    by_model: dict[str, list[dict[str, Any]]] = {m: [] for m in MODELS}
    for raw in xstest.events("all", data):
        by_model[raw["model"]].append(raw)
    for m, rows in by_model.items():
        labs = [r["labels"] for r in rows]
        out[m] = {
            "responses": [r["response"] for r in rows],
            "prompt_ids": [r["event_id"].rsplit(":", 1)[1] for r in rows],
            "gold": np.array([bool(lab["refused"]) for lab in labs]),
            "strmatch": np.array([is_refusal(lab["strmatch_label"]) for lab in labs]),
            "gpt4_judge": np.array([is_refusal(lab["gpt4_label"]) for lab in labs]),
            "stage1": np.array([_refused(refusal, r) for r in rows]),
        }
    turns = [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines()]
    raws = [event(t["id"], t["query"], t["response"], [], {}) for t in turns]
    out["blind_train"] = {
        "responses": [t["response"] for t in turns],
        "prompt_ids": [t["id"] for t in turns],
        "gold": np.array([t["label"] != "answer" for t in turns]),
        "stage1": np.array([_refused(refusal, r) for r in raws]),
    }
    return out


def _refused(det: RefusalDetector, raw: dict[str, Any]) -> bool:
    return any(d.category == "refusal" for d in det(_event(raw)))


def static_vectors() -> np.ndarray:
    """(vocab, 384): each token id alone through the encoder ([CLS] t [SEP]), centred."""
    from monitors.judges.embedded_encoder import Encoder

    enc = Encoder(threads=2, cache_size=0, batch_size=512)
    enc.load()
    vocab = enc._tokenizer.get_vocab_size()
    out = np.zeros((vocab, 384), np.float32)
    for i in range(0, vocab, 512):
        out[i : i + 512] = enc._run([[101, t, 102] for t in range(i, min(vocab, i + 512))])
    return out - out.mean(axis=0)


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Class-balanced logistic regression; the last weight is the bias."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    yf = y.astype(float)
    sw = np.where(y, len(y) / (2 * y.sum()), len(y) / (2 * (~y).sum()))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = 1 / (1 + np.exp(-np.clip(xb @ w, -60, 60)))
        v = -np.sum(sw * (yf * np.log(p + 1e-12) + (1 - yf) * np.log(1 - p + 1e-12)))
        g = xb.T @ (sw * (p - yf))
        g[:-1] += 2 * l2 * w[:-1]
        return float(v + l2 * np.sum(w[:-1] ** 2)), g

    return np.asarray(minimize(loss, np.zeros(xb.shape[1]), jac=True, method="L-BFGS-B").x)


def prf(gold: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    tp, fp, fn = int(np.sum(pred & gold)), int(np.sum(pred & ~gold)), int(np.sum(~pred & gold))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {
        "f1": 2 * p * r / (p + r) if p + r else 0.0,
        "precision": p,
        "recall": r,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def fold_of(prompt_id: str) -> int:
    return int(hashlib.sha256(f"deflection:{prompt_id}".encode()).hexdigest(), 16) % FOLDS


class Study:
    def __init__(self, rows: dict[str, Rows], vectors: np.ndarray) -> None:
        tok, self.tokenizer_sha256 = load_tokenizer(512)
        pieces = WordPieces(tok)
        gate = Gate(gate_cues(), SHORT_CHARS, MIN_WORDS, HEAD_CHARS)
        self.rows = rows
        for r in rows.values():
            heads = [t[:HEAD_CHARS] for t in r["responses"]]
            ids = [pieces.ids(h) for h in heads]
            r["x"] = np.array([vectors[i].mean(0) if i else np.zeros(384) for i in ids])
            r["gate"] = np.array([gate(t) for t in r["responses"]])
            r["fold"] = np.array([fold_of(p) for p in r["prompt_ids"]])
        self.scale = float(np.mean(np.linalg.norm(rows[MODELS[0]]["x"], axis=1)))
        for r in rows.values():
            r["x"] = r["x"] / self.scale

    def held_out(self, train: list[str], test: str, l2: float, thr: float) -> np.ndarray:
        """Stage 1 OR (gate AND model) on `test`, prompt-disjoint from the training rows."""
        t = self.rows[test]
        pred = np.zeros(len(t["gold"]), bool)
        bt = self.rows["blind_train"]
        for k in range(FOLDS):
            keep = [self.rows[m]["fold"] != k for m in train]
            x = np.vstack(
                [self.rows[m]["x"][s] for m, s in zip(train, keep, strict=True)] + [bt["x"]]
            )
            y = np.concatenate(
                [self.rows[m]["gold"][s] for m, s in zip(train, keep, strict=True)] + [bt["gold"]]
            )
            w = fit(x, y, l2)
            sel = t["fold"] == k
            pred[sel] = (t["x"][sel] @ w[:-1] + w[-1]) > thr
        return t["stage1"] | (t["gate"] & pred)

    def nested(self, held: str) -> dict[str, Any]:
        train = [m for m in MODELS if m != held]
        inner = {
            (l2, thr): float(
                np.mean(
                    [
                        prf(self.rows[b]["gold"], self.held_out([a], b, l2, thr))["f1"]
                        for a, b in ((train[0], train[1]), (train[1], train[0]))
                    ]
                )
            )
            for l2 in L2S
            for thr in THRESHOLDS
        }
        l2, thr = max(inner, key=lambda k: inner[k])
        r = self.rows[held]
        gold = r["gold"]
        missed = gold & ~r["stage1"]
        return {
            "chosen": {"l2": l2, "threshold_logit": thr, "inner_f1": inner[(l2, thr)]},
            "rows": len(gold),
            "refusals": int(gold.sum()),
            "stage1_plus_deflection": prf(gold, self.held_out(train, held, l2, thr)),
            "stage1": prf(gold, r["stage1"]),
            "strmatch": prf(gold, r["strmatch"]),
            "gpt4_judge": prf(gold, r["gpt4_judge"]),
            "gate": {
                "missed_by_stage1": int(missed.sum()),
                "of_them_gated": int((missed & r["gate"]).sum()),
                "share_of_rows": float(r["gate"].mean()),
            },
        }

    def final(self, l2: float) -> tuple[np.ndarray, float]:
        names = [*MODELS, "blind_train"]
        w = fit(
            np.vstack([self.rows[m]["x"] for m in names]),
            np.concatenate([self.rows[m]["gold"] for m in names]),
            l2,
        )
        return w, self.scale


def model_document(
    study: Study, vectors: np.ndarray, w: np.ndarray, thr_logit: float, l2: float
) -> dict[str, Any]:
    per_token = vectors @ w[:-1] / study.scale  # the mean's weight, per token
    scale = float(np.max(np.abs(per_token)) / 127)
    q = np.clip(np.round(per_token / scale), -127, 127).astype(np.int8).tobytes()
    bias = float(w[-1])
    thr = float(1 / (1 + np.exp(-thr_logit)))
    return {
        "format": FORMAT,
        "fingerprint": fingerprint(HEAD_CHARS, bias, thr, scale, q),
        "tokenizer_sha256": study.tokenizer_sha256,
        "head_chars": HEAD_CHARS,
        "bias": bias,
        "threshold": thr,
        "scale": scale,
        "fitted": {
            "by": "python -m bench.quality.deflection_fit --write",
            "date": date.today().isoformat(),
            "data": "XSTest v2 gpt4, llama2new, mistralinstruct (human labels) +"
            " bench/quality/blind_deflection_train (301 turns)",
            "l2": l2,
            "threshold_logit": thr_logit,
        },
        "weights_int8": base64.b64encode(q).decode(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.quality.deflection_fit")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--write", action="store_true", help=f"write {MODEL.relative_to(ROOT)}")
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    vectors = static_vectors()
    study = Study(load(args.data), vectors)
    per_family = {m: study.nested(m) for m in MODELS}
    for m, res in per_family.items():
        both = res["stage1_plus_deflection"]
        print(
            f"{m:16} held-out F1 {both['f1']:.3f} (P {both['precision']:.3f}"
            f" R {both['recall']:.3f}) | stage 1 {res['stage1']['f1']:.3f}"
            f" | string match {res['strmatch']['f1']:.3f}"
            f" | GPT-4 judge {res['gpt4_judge']['f1']:.3f} | chose {res['chosen']}"
        )
    grid = {
        (l2, thr): float(
            np.mean(
                [
                    prf(
                        study.rows[h]["gold"],
                        study.held_out([m for m in MODELS if m != h], h, l2, thr),
                    )["f1"]
                    for h in MODELS
                ]
            )
        )
        for l2 in L2S
        for thr in THRESHOLDS
    }
    l2, thr = max(grid, key=lambda k: grid[k])
    best = grid[(l2, thr)]
    print(
        f"shipped: l2 {l2}, threshold logit {thr} (mean held-out F1 of the grid's best {best:.3f})"
    )
    result = {
        "per_family": per_family,
        "shipped": {"l2": l2, "threshold_logit": thr, "mean_held_out_f1": grid[(l2, thr)]},
        "head_chars": HEAD_CHARS,
        "short_chars": SHORT_CHARS,
        "folds": FOLDS,
    }
    if args.write:
        w, _ = study.final(l2)
        doc = model_document(study, vectors, w, thr, l2)
        MODEL.parent.mkdir(parents=True, exist_ok=True)
        MODEL.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        result["shipped"]["fingerprint"] = doc["fingerprint"]
        det = DeflectionDetector()
        print(
            f"wrote {MODEL} ({MODEL.stat().st_size:,} bytes), fingerprint {det.model.fingerprint}"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
