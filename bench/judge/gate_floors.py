"""Fit the embedded judge's gate floors on the DEVELOPER split only.

Run from the repo root (writes ``monitors/judges/embedded_gate_floors.json``)::

    python -m bench.judge.gate_floors [--out PATH]

The default gate floors (``gates.*.min``) are written for an LLM judge's scale; the
embedded judge puts "unsupported" at 0.5 (its F1-optimal dev threshold), so it gets its
own floors (``min_by_judge``). Operating point: the floor is the ``q`` quantile of the
metric's scores on *good* dev items, i.e. at most ``q`` of good items fail the floor:
``q = 0.01`` for the critical gate (it pages: with the default alert floor of 95 % the
gate's false-fail rate on good traffic must stay well below 5 %), ``0.05`` for quality.
The relevance metrics are the dev-fitted logistic P(own question's text vs another
question's); their floor is that curve's decision point, 0.5 (reported: the share of own
pairs failing it and of mismatched pairs passing it).

* faithfulness / hallucination (support scale): RAGTruth dev responses without a
  labelled hallucination; reported with the share of hallucinated dev responses that
  fail the floor (recall at that operating point), and HaluEval dev right / hallucinated;
* citation_accuracy (support of single sentences): RAGTruth dev claim sentences that
  overlap no hallucination span;
* answer_relevance: RAGTruth dev (query, response) pairs; mismatched: the next item's
  response;
* context_relevance: mean relevance of an item's passages to its query (RAGTruth dev);
  mismatched: the next question's passages.

``source_policy_usage`` has no labelled dev data, and the embedded judge's version of it
(how well a restricted chunk supports a sentence) cannot tell a permitted paraphrase from a
violation, so with the embedded judge it is not gated (floor 0.0: scored and exported,
never failing the critical gate); the ``source_policy`` rule detector covers violations on
every turn. ``citation_coverage`` does not depend on the judge's scale: it keeps its
floor. Only ``split == "dev"`` items are read.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.quality.judge_data import SALT, halueval, ragtruth, sentence_labels
from monitors.judges.embedded import MiniLMJudge

OUT = Path(__file__).resolve().parents[2] / "monitors" / "judges" / "embedded_gate_floors.json"
Q = {"critical": 0.01, "quality": 0.05, "diagnostic": 0.05}
RELEVANCE_FLOOR = 0.5
NOT_GATED = {"source_policy_usage": 0.0}
GATE_OF = {
    "faithfulness": "critical",
    "hallucination": "critical",
    "citation_accuracy": "quality",
    "answer_relevance": "quality",
    "context_relevance": "quality",
}


def _floor(good: list[float], q: float) -> float:
    """Round down to 0.05 so the floor sits at or below the quantile."""
    return float(np.floor(float(np.quantile(good, q)) * 20.0) / 20.0)


def _share_below(values: list[float], floor: float) -> float:
    return round(float(np.mean(np.array(values) < floor)), 4) if values else float("nan")


def collect(judge: MiniLMJudge, pairs: int) -> dict[str, dict[str, list[float]]]:
    rag = [it for it in ragtruth() if it.split == "dev"]
    out: dict[str, dict[str, list[float]]] = {
        k: {"good": [], "bad": []}
        for k in ("support", "sentence", "answer_relevance", "context_relevance", "halueval")
    }
    seen: set[str] = set()
    for n, it in enumerate(rag):
        other = rag[(n + 7) % len(rag)]
        key = "bad" if it.hallucinated else "good"
        out["support"][key].append(judge.support(it.response, it.contexts).score)
        claims = judge.claims(it.response, it.contexts)
        for claim, bad in zip(claims, sentence_labels(it, [c.text for c in claims]), strict=True):
            out["sentence"]["bad" if bad else "good"].append(judge.rescale(claim.support))
        out["answer_relevance"]["good"].append(judge.relevance(it.query, [it.response])[0])
        if other.query != it.query:
            out["answer_relevance"]["bad"].append(judge.relevance(it.query, [other.response])[0])
        source = str(it.meta.get("source_id", it.id))
        if source not in seen:
            seen.add(source)
            rel = judge.relevance(it.query, it.contexts)
            out["context_relevance"]["good"].append(float(np.mean(rel)))
            if other.query != it.query:
                rel = judge.relevance(it.query, other.contexts)
                out["context_relevance"]["bad"].append(float(np.mean(rel)))
    halu = sorted((p for p in halueval() if p.split == "dev"), key=lambda p: p.id)[:pairs]
    for p in halu:
        out["halueval"]["good"].append(judge.support(p.right, [p.knowledge]).score)
        out["halueval"]["bad"].append(judge.support(p.hallucinated, [p.knowledge]).score)
    return out


def fit(data: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    source = {
        "faithfulness": "support",
        "hallucination": "support",
        "citation_accuracy": "sentence",
        "answer_relevance": "answer_relevance",
        "context_relevance": "context_relevance",
    }
    floors: dict[str, float] = {}
    report: dict[str, Any] = {}
    for metric, gate in GATE_OF.items():
        d = data[source[metric]]
        relevance = metric.endswith("_relevance")
        floor = RELEVANCE_FLOOR if relevance else _floor(d["good"], Q[gate])
        floors[metric] = floor
        report[metric] = {
            "gate": gate,
            "operating_point": "logistic decision point" if relevance else f"q={Q[gate]}",
            "dev_rows": source[metric],
            "good_n": len(d["good"]),
            "good_fail_share": _share_below(d["good"], floor),
            "bad_n": len(d["bad"]),
            "bad_fail_share": _share_below(d["bad"], floor),  # relevance: mismatched
        }
    floors.update(NOT_GATED)
    report["source_policy_usage"] = {"gate": "critical", "operating_point": "not gated"}
    h = data["halueval"]
    f = floors["faithfulness"]
    report["halueval_dev_at_faithfulness_floor"] = {
        "pairs": len(h["good"]),
        "right_fail_share": _share_below(h["good"], f),
        "hallucinated_fail_share": _share_below(h["bad"], f),
    }
    return {
        "version": 1,
        "judge": MiniLMJudge.name,
        "note": (
            "fitted by python -m bench.judge.gate_floors on the developer split only "
            f"(salted hash '{SALT}'); floor = q quantile of good dev items' scores, "
            "rounded down to 0.05; q = 0.01 critical, 0.05 quality; relevance metrics: 0.5, "
            "the decision point of the dev-fitted relevance logistic"
        ),
        "floors": floors,
        "report": report,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--halueval-pairs", type=int, default=500)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    started = time.monotonic()
    judge = MiniLMJudge(threads=1)
    result = fit(collect(judge, args.halueval_pairs))
    result["seconds"] = round(time.monotonic() - started, 1)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
