"""Reference-based answer scoring on TruthfulQA: a judge metric against overlap baselines.

Run from the repo root::

    python -m bench.quality.reference_eval --split test [--metric answer_correctness]
        [--judge embedded | --base-url URL --model M] [--limit N] --json out.json

Events come from ``bench.datasets`` (``truthfulqa``: the non-best correct answers and the
incorrect answers of each question, ``labels.expected_answer`` = the best answer). Each
scorer gives every event a score, higher = more likely correct: token-F1 (SQuAD
normalisation) and ROUGE-L F of response vs expected answer, the MiniLM cosine of the two
(the embedded judge's encoder), and the judge metric (``create_metric``; the event it sees
carries the reference fields of ``labels`` only, never the gold verdict). Figures per
scorer: ROC AUC over the events (positive = correct; 95% CI from 1000 bootstrap resamples
of questions, seed 0) and within-question pairwise accuracy (every (correct, incorrect)
pair of a question: 1 if the correct answer scores higher, 0.5 on a tie). Judge errors and
skips are counted, not scored. An unknown metric is reported and the baselines still run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import string
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score  # type: ignore[import-untyped]

from tests.support.datasets import DATA, adapt

__all__ = ["auc_ci", "figures", "main", "pairwise", "rouge_l", "token_f1"]

Scores = Sequence[float | None]
Pair = tuple[float | None, int]
RESAMPLES, SEED = 1000, 0
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


def squad_tokens(text: str) -> list[str]:
    """SQuAD normalisation: lower case, no punctuation, no articles, split on whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return _ARTICLES.sub(" ", text).split()


def token_f1(response: str, expected: str) -> float:
    """SQuAD token F1 (bag of normalised tokens); two empty texts agree (1.0)."""
    pred, gold = squad_tokens(response), squad_tokens(expected)
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def rouge_l(response: str, expected: str) -> float:
    """ROUGE-L F1: longest common subsequence of lower-cased alphanumeric tokens."""
    pred, gold = (re.findall(r"[a-z0-9]+", t.lower()) for t in (response, expected))
    if not pred or not gold:
        return float(pred == gold)
    row = [0] * (len(gold) + 1)  # LCS by dynamic programming, one row at a time
    for p in pred:
        diag = 0
        for j, g in enumerate(gold, 1):
            diag, row[j] = row[j], diag + 1 if p == g else max(row[j], row[j - 1])
    lcs = row[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(gold)
    return 2 * precision * recall / (precision + recall)


def minilm_cosine(pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Cosine of whole-text all-MiniLM-L6-v2 embeddings (the embedded judge's encoder)."""
    from monitors.judges.embedded_encoder import Encoder

    texts = sorted({t for pair in pairs for t in pair})
    encoder = Encoder(threads=1, cache_size=len(texts) + 1, batch_size=32)
    vecs = dict(zip(texts, encoder.embed(texts), strict=True))
    return [float(vecs[a] @ vecs[b]) for a, b in pairs]


def pairwise(scores: Sequence[float], correct: Sequence[bool], groups: Sequence[Any]) -> Pair:
    """Share of within-group (correct, incorrect) pairs the correct one wins (tie 0.5)."""
    by: dict[Any, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for s, c, g in zip(scores, correct, groups, strict=True):
        by[g][0 if c else 1].append(s)
    wins = [1.0 if a > b else 0.5 if a == b else 0.0 for p, n in by.values() for a in p for b in n]
    return (sum(wins) / len(wins) if wins else None), len(wins)


def _auc(scores: np.ndarray, correct: np.ndarray) -> float | None:
    return float(roc_auc_score(correct, scores)) if 0 < correct.sum() < len(correct) else None


def auc_ci(scores: np.ndarray, correct: np.ndarray, groups: Sequence[Any]) -> list[float] | None:
    """95% percentile interval of the AUC over 1000 bootstrap resamples of the groups."""
    members: dict[Any, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    blocks = [np.array(v) for v in members.values()]
    rng, aucs = np.random.default_rng(SEED), []
    for _ in range(RESAMPLES if blocks else 0):
        idx = np.concatenate([blocks[k] for k in rng.integers(0, len(blocks), len(blocks))])
        if (a := _auc(scores[idx], correct[idx])) is not None:
            aucs.append(a)
    return [float(np.percentile(aucs, 2.5)), float(np.percentile(aucs, 97.5))] if aucs else None


def figures(scores: Scores, correct: Sequence[bool], groups: Sequence[Any]) -> dict[str, Any]:
    """AUC (+ CI over groups), pairwise accuracy and counts of the scored events."""
    keep = [i for i, s in enumerate(scores) if s is not None]
    s = np.array([scores[i] for i in keep], dtype=float)
    c, g = np.array([correct[i] for i in keep], dtype=bool), [groups[i] for i in keep]
    pw, n_pairs = pairwise(list(s), list(c), g)
    return {
        "auc": _auc(s, c),
        "auc_ci95": auc_ci(s, c, g),
        "pairwise": pw,
        "n_pairs": n_pairs,
        "n_events": len(keep),
        "n_questions": len(set(g)),
    }


async def metric_scores(
    name: str, kind: str, opts: dict[str, Any], raws: list[dict[str, Any]], concurrency: int = 4
) -> tuple[list[float | None], dict[str, Any]]:
    """Scores of metric `name` (None unless scored) and what happened: counts, reasons."""
    from monitors.judges import create_judge
    from monitors.metrics import create_metric
    from stream.contract.events import Event
    from stream.contract.reference import REFERENCE_FIELDS

    info: dict[str, Any] = {"name": name, "judge": kind, "available": True}
    try:
        metric = create_metric(name)
    except ValueError as exc:  # not registered (yet): the baselines still run
        return [None] * len(raws), {**info, "available": False, "error": str(exc)}
    judge = create_judge(kind, **opts)
    gate = asyncio.Semaphore(concurrency)

    async def one(raw: dict[str, Any]) -> tuple[str, float | None, str | None]:
        labels = {k: v for k, v in raw["labels"].items() if k in REFERENCE_FIELDS}
        event = Event.model_validate({**raw, "labels": labels})  # no gold verdict in sight
        async with gate:
            try:
                outs = await metric(event, judge)
            except Exception as exc:  # a failing metric is counted with the judge errors
                return "judge_error", None, f"exception: {type(exc).__name__}: {exc}"[:200]
        out = next((o for o in outs if o.metric == name), outs[0] if outs else None)
        if out is None:
            return "skipped", None, "no outcome"
        return out.status, out.score if out.status == "scored" else None, out.reason

    try:
        results = await asyncio.gather(*(one(r) for r in raws))
    finally:
        if hasattr(judge, "aclose"):
            await judge.aclose()
    counts = Counter({"scored": 0, "skipped": 0, "judge_error": 0})
    counts.update(status for status, _, _ in results)
    reasons = Counter(f"{st}: {why}" for st, _, why in results if st != "scored")
    info.update(judge=getattr(judge, "name", kind), counts=dict(counts), reasons=dict(reasons))
    return [score for _, score, _ in results], info


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def table(report: dict[str, Any]) -> str:
    """The figures as a markdown table."""
    r = report
    lines = [
        f"TruthfulQA `{r['split']}`: {r['n_events']} events, {r['n_questions']} questions\n",
        "| scorer | events | questions | AUC [95% CI] | pairwise (pairs) | scored/skipped/error |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in r["scorers"].items():
        ci = " [{:.3f}, {:.3f}]".format(*f["auc_ci95"]) if f["auc_ci95"] else ""
        c = f.get("counts")
        counts = f"{c['scored']}/{c['skipped']}/{c['judge_error']}" if c else "-"
        cells = [name, f["n_events"], f["n_questions"], _fmt(f["auc"]) + ci]
        cells += [f"{_fmt(f['pairwise'])} ({f['n_pairs']})", counts]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    m = r["metric"]
    if not m["available"]:
        lines += [f"\nmetric `{m['name']}` NOT MEASURED: {m['error']}"]
    elif m["reasons"]:  # why events went unscored (a crashing metric shows up here)
        lines += [f"\n`{m['name']}` not scored: " + json.dumps(m["reasons"])]
    return "\n".join(lines)


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.quality.reference_eval")
    add = ap.add_argument
    add("--split", choices=("dev", "test", "all"), default="test")
    add("--metric", default="answer_correctness")
    add("--judge", choices=("embedded", "openai"), help="default: openai with --base-url")
    add("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    add("--model", help="the openai judge's model")
    add("--api-key-env", help="environment variable holding the openai judge's key")
    add("--concurrency", type=int, default=4, help="events judged at once")
    add("--limit", type=int, help="first N events only")
    add("--data", type=Path, default=DATA, help="the shared datasets folder")
    add("--json", type=Path, help="write the figures here")
    args = ap.parse_args(argv)
    args.judge = args.judge or ("openai" if args.base_url else "embedded")
    if args.judge == "openai" and not (args.base_url and args.model):
        ap.error("the openai judge needs --base-url and --model")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    opts: dict[str, Any] = {}
    if args.judge == "openai":
        opts = {"base_url": args.base_url, "model": args.model}
        if args.api_key_env:
            opts["api_key"] = os.environ.get(args.api_key_env)
    raws = list(islice(adapt("truthfulqa", args.split, args.data), args.limit))
    correct = [bool(r["labels"]["human"]["overall"]) for r in raws]
    groups = [r["labels"]["pair"] for r in raws]
    pairs = [(r["response"], r["labels"]["expected_answer"]) for r in raws]
    scorers: dict[str, Scores] = {
        "token_f1": [token_f1(a, b) for a, b in pairs],
        "rouge_l": [rouge_l(a, b) for a, b in pairs],
        "minilm_cosine": minilm_cosine(pairs),
    }
    scores, info = asyncio.run(metric_scores(args.metric, args.judge, opts, raws, args.concurrency))
    if info["available"]:
        scorers[args.metric] = scores
    else:
        print(f"metric {args.metric!r} unavailable: {info['error']}", file=sys.stderr)
    report: dict[str, Any] = {"dataset": "truthfulqa", "split": args.split, "limit": args.limit}
    report.update(n_events=len(raws), n_questions=len(set(groups)), n_correct=sum(correct))
    report["n_incorrect"] = len(raws) - sum(correct)
    report["scorers"] = {name: figures(s, correct, groups) for name, s in scorers.items()}
    report["metric"] = info
    if info["available"]:
        report["scorers"][args.metric]["counts"] = info["counts"]
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
