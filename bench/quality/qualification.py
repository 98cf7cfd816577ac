"""Metric qualification of the embedded judge's metrics, in the style of ADAMS.

Run from the repo root::

    python -m bench.quality.qualification [--halueval-pairs N] [--json PATH]

Two questions per metric, on held-out ``test`` data read through ``bench.datasets``;
every score comes from the registered metric itself (``create_metric(name)`` run with
the embedded judge, exactly as the sidecar runs it):

* **discriminative power**: Cohen's d = (mean score of the good answers - mean of the
  bad ones) / pooled standard deviation (n-1 weighted). Target d > 0.4. Good / bad:
  ``faithfulness``: faithful vs hallucinated (human or construction label);
  ``answer_relevance``: the answer to its own question vs the answer to another question
  of the same data set (off-topic), and, for reference, faithful vs hallucinated (which
  it is not meant to separate); ``context_relevance``: the question with its own
  passages vs with another item's.
* **rewrite consistency**: each scored text gets the three deterministic rewrites of
  ``bench.quality.paraphrase`` (the response for the answer metrics, the passages for
  ``context_relevance``). Over the items whose rewrite changed the text,
  VR = Var(score of every changed rewrite) / Var(score of the originals of those items):
  1.0 when rewriting leaves the scores' spread unchanged; with independent rewrite noise
  of variance s², VR ≈ 1 + s² / Var(originals). Target VR < 1.2. Also reported: the
  mean absolute score change and the mean shift (rewrite - original).

Citation metrics: none of the data sets carries citation markers, so they are not
qualified here. FaithBench's fixed query ("Summarize the document.") makes the
relevance metrics meaningless there; they run on RAGTruth and HaluEval QA only.

The maths (d, VR, the rewrites) is product code shared with `ragpulse qualify`:
``monitors.evaluation.qualification`` and ``monitors.evaluation.rewrites``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from bench.quality.judge_data import judge_fingerprint
from bench.quality.paraphrase import KINDS, paraphrase
from monitors.evaluation.qualification import D_TARGET, VR_TARGET, cohens_d, rewrite_stats
from monitors.judges.embedded import MiniLMJudge
from monitors.metrics import create_metric
from stream.contract.events import Event
from tests.support.datasets import adapt

RESULTS = Path(__file__).resolve().parents[1] / "results" / "qualification.json"
Raw = dict[str, Any]


class Scorer:
    def __init__(self, judge: MiniLMJudge) -> None:
        self.judge = judge
        self.metrics = {
            n: create_metric(n) for n in ("faithfulness", "answer_relevance", "context_relevance")
        }

    def __call__(self, metric: str, raw: Raw) -> float:
        event = Event.model_validate({k: v for k, v in raw.items() if k != "labels"})
        (out,) = asyncio.run(self.metrics[metric](event, self.judge))
        if out.score is None:
            raise RuntimeError(f"{metric} on {raw['event_id']}: {out.status} {out.reason}")
        return float(out.score)


def _with_response(raw: Raw, text: str) -> Raw:
    return raw | {"response": text}


def _with_context(raw: Raw, kind: str) -> Raw:
    ctx = [c | {"content": paraphrase(c["content"], kind)} for c in raw["retrieved_context"]]
    return raw | {"retrieved_context": ctx}


def _other(raws: list[Raw], key: Callable[[Raw], str]) -> list[Raw]:
    """For each item, the next item (cyclically) with a different grouping key."""
    out = []
    for n, raw in enumerate(raws):
        m = (n + 1) % len(raws)
        while key(raws[m]) == key(raw) and m != n:
            m = (m + 1) % len(raws)
        out.append(raws[m])
    return out


def _rewrites(
    score: Callable[[Raw], float],
    raws: list[Raw],
    orig: list[float],
    rewrite: Callable[[Raw, str], Raw],
    text: Callable[[Raw], str],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    all_orig: list[float] = []
    all_new: list[float] = []
    for kind in KINDS:
        o, r = [], []
        for raw, s in zip(raws, orig, strict=True):
            new = rewrite(raw, kind)
            if text(new) != text(raw):
                o.append(s)
                r.append(score(new))
        all_orig += o
        all_new += r
        out[kind] = rewrite_stats(o, r)
    out["all"] = rewrite_stats(all_orig, all_new)
    vr = out["all"]["vr"]
    out["meets_target"] = None if vr != vr else vr < VR_TARGET  # NaN: too few rewrites
    return out


def _disc(good: list[float], bad: list[float]) -> dict[str, Any]:
    d = cohens_d(good, bad)
    return {
        "n_good": len(good),
        "n_bad": len(bad),
        "mean_good": statistics.fmean(good) if good else None,
        "mean_bad": statistics.fmean(bad) if bad else None,
        "d": d,
        "meets_target": d > D_TARGET,
    }


def qualify(score: Scorer, name: str, raws: list[Raw], relevance: bool) -> dict[str, Any]:
    bad = [bool(r["labels"]["hallucinated"]) for r in raws]
    resp = lambda r: r["response"]  # noqa: E731
    out: dict[str, Any] = {"n": len(raws)}
    metrics = ("faithfulness", "answer_relevance") if relevance else ("faithfulness",)
    for metric in metrics:
        orig = [score(metric, r) for r in raws]
        row: dict[str, Any] = {
            "faithful_vs_hallucinated": _disc(
                [s for s, b in zip(orig, bad, strict=True) if not b],
                [s for s, b in zip(orig, bad, strict=True) if b],
            ),
        }
        if metric == "answer_relevance":
            off = [
                score(metric, _with_response(r, o["response"]))
                for r, o in zip(raws, _other(raws, lambda r: r["query"]), strict=True)
            ]
            row["own_vs_offtopic_answer"] = _disc(orig, off)
        row["rewrite"] = _rewrites(
            partial(score, metric),
            raws,
            orig,
            lambda r, k: _with_response(r, paraphrase(r["response"], k)),
            resp,
        )
        out[metric] = row
    if relevance:  # one item per distinct question: the context does not depend on the answer
        seen: dict[str, Raw] = {}
        for r in raws:
            seen.setdefault(r["query"], r)
        items = list(seen.values())
        own = [score("context_relevance", r) for r in items]
        other = [
            score("context_relevance", r | {"retrieved_context": o["retrieved_context"]})
            for r, o in zip(items, _other(items, lambda r: r["query"]), strict=True)
        ]
        ctx_text = lambda r: "".join(c["content"] for c in r["retrieved_context"])  # noqa: E731
        out["context_relevance"] = {
            "own_vs_other_passages": _disc(own, other),
            "rewrite": _rewrites(
                lambda r: score("context_relevance", r), items, own, _with_context, ctx_text
            ),
        }
    print(f"{name}: done", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--halueval-pairs", type=int, default=300)
    ap.add_argument("--limit", type=int, default=None, help="cap items per data set")
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    score = Scorer(MiniLMJudge())
    halu = list(islice(adapt("halueval_qa", "test"), 2 * args.halueval_pairs))
    data = {
        "ragtruth_test": (list(adapt("ragtruth", "test"))[: args.limit], True),
        "halueval_qa_test": (halu[: args.limit], True),
        "faithbench_all": (list(adapt("faithbench", "test"))[: args.limit], False),
    }
    result: dict[str, Any] = {
        "judge": score.judge.name,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "judge_code": judge_fingerprint(),
        "targets": {"d": D_TARGET, "vr": VR_TARGET},
    }
    for name, (raws, relevance) in data.items():
        result[name] = qualify(score, name, raws, relevance)
    text = json.dumps(result, indent=2)
    print(text)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
