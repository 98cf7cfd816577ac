"""Measure the embedded judge on held-out labelled data, and its cost per turn.

Run from the repo root::

    python -m bench.quality.embedded_judge [--limit N] [--json PATH] [--skip-cost]

Only items of the held-out ``test`` split are scored, read through the data set adapters
(``bench.datasets``; split as in ``bench.quality.judge_data``; the
calibration was fitted on ``dev`` by ``bench.quality.embedded_fit``). FaithBench was
never used for fitting: all 400 summaries are scored. A response is judged
hallucinated when its *raw* support score is below 0.5 (the threshold fitted on RAGTruth
dev; the metrics report the score through a monotone score map, which keeps every
ranking figure here: ``bench.quality.embedded_score_maps`` measures the calibrated scale).

* RAGTruth QA subset: response-level precision / recall / F1 (hallucination = any
  labelled span) and ROC AUC of ``1 - support``;
* HaluEval QA: accuracy of ranking the right answer above the hallucinated one (ties
  count one half);
* HaluEval general (no context: ``faithfulness`` cannot run): ROC AUC of
  ``answer_relevance`` and of the response's support by the question, against the humans'
  yes/no;
* FaithBench: balanced accuracy (hallucinated = an annotation label starting with
  ``Unwanted``) beside the detectors' scores shipped in its metadata, read the same
  way (score < 0.5 = hallucinated), and ROC AUC of each;
* relevance: ROC AUC of a question against its own passages vs another item's;
* cost: ms per event for 3-8 chunks of 500-1,500 chars cut from held-out passages, with
  1 and 2 onnxruntime threads: cold (new chunks: ``support`` + ``relevance`` of the chunks
  and of the response, as the RAG triad runs them) and warm (another response against
  chunks already embedded); and the model load time in a fresh interpreter.

`--limit N` caps the items per data set (for a quick run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sklearn.metrics import (  # type: ignore[import-untyped]
    balanced_accuracy_score,
    precision_recall_fscore_support,
    roc_auc_score,
)

from bench.quality.judge_data import faithbench, halueval, judge_fingerprint, ragtruth
from monitors.judges.claims import split_sentences
from monitors.judges.embedded import MiniLMJudge
from tests.support.datasets import adapt
from tests.support.datasets.faithbench import BASELINES

_LOAD = (
    "import time; t = time.perf_counter(); from monitors.judges.embedded import MiniLMJudge; "
    "j = MiniLMJudge(); j.load(); print(time.perf_counter() - t)"
)


def _support(judge: MiniLMJudge, ev: dict[str, Any]) -> float:
    """What the ``faithfulness`` metric scores: support of the response by the chunks, the
    query passed as a *known* text (``monitors.metrics.triad.user_inputs``)."""
    contexts = [c["content"] for c in ev.get("retrieved_context", [])]
    return judge.support(ev["response"], contexts, known=[ev["query"]]).score


def eval_ragtruth(judge: MiniLMJudge, limit: int | None) -> dict[str, Any]:
    events = list(adapt("ragtruth", "test"))[:limit]
    scores = [_support(judge, ev) for ev in events]
    y = [bool(ev["labels"]["hallucinated"]) for ev in events]
    pred = [s < 0.5 for s in scores]
    p, r, f, _ = precision_recall_fscore_support(y, pred, average="binary", zero_division=0.0)
    return {
        "n": len(events),
        "hallucinated": sum(y),
        "precision": float(p),
        "recall": float(r),
        "f1": float(f),
        "roc_auc": float(roc_auc_score(y, [1 - s for s in scores])),
        "flagged": sum(pred),
    }


def eval_halueval(judge: MiniLMJudge, limit: int | None) -> dict[str, Any]:
    pairs: dict[int, dict[bool, float]] = {}
    for ev in adapt("halueval_qa", "test"):
        pair = pairs.setdefault(int(ev["labels"]["pair"]), {})
        if limit is not None and len(pairs) > limit:
            del pairs[int(ev["labels"]["pair"])]
            break
        pair[bool(ev["labels"]["hallucinated"])] = _support(judge, ev)
    wins = sum(p[False] > p[True] for p in pairs.values())
    ties = sum(p[False] == p[True] for p in pairs.values())
    return {"n": len(pairs), "accuracy": (wins + 0.5 * ties) / len(pairs), "ties": ties}


def eval_halueval_general(judge: MiniLMJudge, limit: int | None) -> dict[str, Any]:
    """No context in this data set: ``faithfulness`` is skipped. Reported instead: the
    ``answer_relevance`` score and the response's support by the question alone, each as
    a ranking of the humans' no-hallucination label (ROC AUC; 0.5 = chance)."""
    events = list(adapt("halueval_general", "test"))[:limit]
    y = [not ev["labels"]["hallucinated"] for ev in events]
    rel = [judge.relevance(ev["query"], [ev["response"]])[0] for ev in events]
    sup = [judge.support(ev["response"], [ev["query"]]).score for ev in events]
    return {
        "n": len(events),
        "hallucinated": len(y) - sum(y),
        "faithfulness": "skipped: no retrieved context in the data",
        "answer_relevance_roc_auc": float(roc_auc_score(y, rel)),
        "support_by_question_roc_auc": float(roc_auc_score(y, sup)),
    }


def eval_faithbench(judge: MiniLMJudge, limit: int | None) -> dict[str, Any]:
    events = list(adapt("faithbench", "test"))[:limit]
    y = [bool(ev["labels"]["hallucinated"]) for ev in events]
    scores = [_support(judge, ev) for ev in events]
    out: dict[str, Any] = {"n": len(events), "hallucinated": sum(y)}

    def row(values: list[float]) -> dict[str, float]:
        return {
            "balanced_accuracy": float(balanced_accuracy_score(y, [v < 0.5 for v in values])),
            "roc_auc": float(roc_auc_score(y, [-v for v in values])),
        }

    out["embedded-minilm-v1"] = row(scores)
    for name in BASELINES:
        out[name] = row([float(ev["labels"]["baselines"][name]) for ev in events])
    return out


def eval_relevance(judge: MiniLMJudge, limit: int | None) -> dict[str, Any]:
    groups: dict[str, tuple[str, list[str]]] = {}
    for it in ragtruth():
        if it.split == "test":
            groups.setdefault(str(it.meta["source_id"]), (it.query, it.contexts))
    pairs = list(groups.values())
    pairs += [(it.question, [it.knowledge]) for it in halueval() if it.split == "test"][:300]
    pairs = pairs[:limit]
    y: list[bool] = []
    s: list[float] = []
    for n, (query, ctxs) in enumerate(pairs):
        other = pairs[(n + 1) % len(pairs)][1]
        s += judge.relevance(query, ctxs) + judge.relevance(query, other)
        y += [True] * len(ctxs) + [False] * len(other)
    acc = sum((v >= 0.5) == lab for v, lab in zip(s, y, strict=True)) / len(y)
    return {"pairs": len(y), "roc_auc": float(roc_auc_score(y, s)), "accuracy_at_0.5": acc}


def _events(n: int, seed: int) -> list[tuple[str, str, list[str]]]:
    """`n` turns with 3-8 fresh chunks of 500-1,500 chars cut from held-out passages."""
    rng = random.Random(seed)
    rag = [it for it in ragtruth() if it.split == "test"]
    pool = [s for it in rag for c in it.contexts for s in split_sentences(c)]
    pool += [s for it in faithbench() for s in split_sentences(it.contexts[0])]
    events = []
    for _ in range(n):
        chunks = []
        for _ in range(rng.randint(3, 8)):
            target, pos, text = rng.randint(500, 1500), rng.randrange(len(pool)), ""
            while len(text) < target:
                text += pool[pos % len(pool)] + " "
                pos += 1
            chunks.append(f"[{rng.getrandbits(32):08x}] {text[:target]}")  # unique: cold cache
        it = rng.choice(rag)
        events.append((it.query, it.response, chunks))
    return events


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[round(q * (len(values) - 1))]


def _time_events(judge: MiniLMJudge, events: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    """Cold: support + both relevances on fresh chunks; warm: support of a response never
    seen before against the same (now cached) chunks."""
    rows = []
    for n, (query, response, ctx) in enumerate(events):
        fresh = " ".join(f"Also, {s}" for s in split_sentences(events[n - 1][1]))
        t0 = time.perf_counter()
        judge.support(response, ctx)
        t1 = time.perf_counter()
        judge.relevance(query, ctx)
        judge.relevance(query, [response])
        t2 = time.perf_counter()
        judge.support(fresh, ctx)  # every sentence is new text, the chunks are cached
        t3 = time.perf_counter()
        rows.append((len(ctx), sum(map(len, ctx)), t1 - t0, t2 - t0, t3 - t2))
    rows = rows[2:]  # the first two are warm-up
    ms = {k: [r[i] * 1000 for r in rows] for i, k in ((2, "support"), (3, "triad"), (4, "warm"))}
    out: dict[str, Any] = {"n": len(rows), "mean_chunks": statistics.mean(r[0] for r in rows)}
    out["mean_context_chars"] = statistics.mean(r[1] for r in rows)
    for key, values in ms.items():
        out[f"{key}_ms_median"] = statistics.median(values)
        out[f"{key}_ms_p95"] = _pct(values, 0.95)
    for lo, hi in ((3, 4), (5, 6), (7, 8)):
        sel = [r[3] * 1000 for r in rows if lo <= r[0] <= hi]
        out[f"triad_ms_median_{lo}_{hi}_chunks"] = statistics.median(sel) if sel else None
    return out


def measure_cost(events: int) -> dict[str, Any]:
    out: dict[str, Any] = {"events": events, "load_average_before": os.getloadavg()}
    for threads in (1, 2):
        judge = MiniLMJudge(threads=threads)
        judge.load()
        out[f"threads_{threads}"] = _time_events(judge, _events(events + 2, seed=threads))
    loads = []
    for _ in range(3):
        res = subprocess.run(
            [sys.executable, "-c", _LOAD], capture_output=True, text=True, check=True
        )
        loads.append(float(res.stdout.strip().splitlines()[-1]))
    out["load_s_median"] = statistics.median(loads)
    out["load_s_runs"] = loads
    out["load_average_after"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--cost-events", type=int, default=40)
    ap.add_argument("--skip-cost", action="store_true")
    args = ap.parse_args(argv)
    judge = MiniLMJudge(score_maps=False)  # the raw support scale
    started = time.perf_counter()
    result: dict[str, Any] = {
        "judge": judge.name,
        "machine": f"{os.cpu_count()} cores AMD EPYC, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "judge_code": judge_fingerprint(),
        "calibration_note": judge.calibration.get("note", ""),
        "ragtruth_test": eval_ragtruth(judge, args.limit),
        "halueval_test": eval_halueval(judge, args.limit),
        "faithbench_all": eval_faithbench(judge, args.limit),
        "halueval_general_test": eval_halueval_general(judge, args.limit),
        "relevance_test": eval_relevance(judge, args.limit),
    }
    result["quality_wall_s"] = time.perf_counter() - started
    if not args.skip_cost:
        result["cost"] = measure_cost(args.cost_events)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
