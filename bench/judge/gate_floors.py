"""Fit the embedded judge's gate floors on the DEVELOPER split only, on the scale it reports.

Run from the repo root (writes ``monitors/judges/embedded_gate_floors.json``)::

    python -m bench.judge.gate_floors [--cache PATH] [--out PATH]

The default gate floors (``gates.*.min``) are written for an LLM judge's scale; the
embedded judge gets its own floors (``min_by_judge``), on the scale its metrics report:
the *calibrated* scale (probability that the turn is fine, the score maps of
``monitors/judges/embedded_score_maps.json``) for ``faithfulness``, ``hallucination``,
``answer_relevance`` and ``context_relevance``; the raw support scale for
``citation_accuracy`` (no score map: no labelled citation data). Run
``python -m bench.quality.embedded_score_maps`` first: the floors read the maps file.

Operating point: the floor is the ``q`` quantile of the metric's scores on *good* dev
items, rounded down to 0.05, i.e. at most ``q`` of good items fail it: ``q = 0.01`` for
the critical gate (it pages: with the default alert floor of 95 % the gate's false-fail
rate on good traffic must stay well below 5 %), ``0.05`` for quality. The relevance
metrics' floor is 0.5: on the calibrated scale, the point where the text is as likely
to belong to the question as to another question (reported: the share of own pairs
failing it and of mismatched pairs passing it).

* faithfulness / hallucination: RAGTruth dev responses without a labelled hallucination
  (the map's own data set); reported with the share of hallucinated dev responses that
  fail the floor, and HaluEval dev right / hallucinated answers;
* citation_accuracy (support of single sentences, no known texts): RAGTruth dev claim
  sentences that overlap no hallucination span;
* answer_relevance / context_relevance: RAGTruth and HaluEval dev rows of
  ``bench.quality.embedded_score_data`` (own vs another question's text).

``source_policy_usage`` has no labelled dev data, and the embedded judge's version of it
(how well a restricted chunk supports a sentence) cannot tell a permitted paraphrase from a
violation, so with the embedded judge it is not gated (floor 0.0: scored and exported,
never failing the critical gate); the ``source_policy`` rule detector covers violations on
every turn. ``citation_coverage`` does not depend on the judge's scale: it keeps its
floor. Only ``split == "dev"`` rows are read (the rows are cached, see
``bench.quality.embedded_score_data``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.quality.embedded_score_data import Row, load_rows
from bench.quality.embedded_score_maps import CACHE, predict
from bench.quality.judge_data import SALT
from monitors.judges.embedded import MiniLMJudge, calibration_sha256
from monitors.judges.score_maps import ScoreMaps, load_score_maps

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
    return float(np.floor(float(np.quantile(good, q)) * 20.0 + 1e-9) / 20.0)


def _share_below(values: list[float], floor: float) -> float:
    return round(float(np.mean(np.array(values) < floor)), 4) if values else float("nan")


def collect(rows: list[Row], maps: ScoreMaps) -> dict[str, dict[str, list[float]]]:
    """Good / bad dev scores per source, on the scale each metric reports."""
    dev = [r for r in rows if r.split == "dev"]

    def cal(metric: str, row: Row) -> float:
        fmap = maps.maps.get(metric)
        return row.raw if fmap is None else float(predict(metric, fmap, [row])[0])

    out: dict[str, dict[str, list[float]]] = {
        k: {"good": [], "bad": []}
        for k in ("support", "sentence", "answer_relevance", "context_relevance", "halueval")
    }
    for r in dev:
        key = "good" if r.fine else "bad"
        if r.metric == "faithfulness" and r.dataset == "ragtruth":
            out["support"][key].append(cal("faithfulness", r))
            for support, bad in zip(r.sentence_support, r.claim_bad, strict=True):
                out["sentence"]["bad" if bad else "good"].append(support)
        elif r.metric == "faithfulness" and r.dataset == "halueval":
            out["halueval"][key].append(cal("faithfulness", r))
        elif r.metric in ("answer_relevance", "context_relevance"):
            out[r.metric][key].append(cal(r.metric, r))
    return out


def fit(data: dict[str, dict[str, list[float]]], maps: ScoreMaps) -> dict[str, Any]:
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
            "scale": "calibrated" if metric in maps.maps else "raw",
            "operating_point": "P(fine) = 0.5" if relevance else f"q={Q[gate]}",
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
        "answers": len(h["good"]) + len(h["bad"]),
        "right_fail_share": _share_below(h["good"], f),
        "hallucinated_fail_share": _share_below(h["bad"], f),
    }
    return {
        "version": 2,
        "judge": MiniLMJudge.name,
        "scale": {
            metric: "calibrated" if metric in maps.maps else "raw" for metric in sorted(floors)
        },
        "score_maps_version": maps.version,
        "note": (
            "fitted by python -m bench.judge.gate_floors on the developer split only "
            f"(salted hash '{SALT}'), on the scale each metric reports (calibrated: the "
            "score maps of embedded_score_maps.json); floor = q quantile of good dev "
            "items' scores, rounded down to 0.05; q = 0.01 critical, 0.05 quality; "
            "relevance metrics: 0.5, where P(on topic) = 0.5 on the calibrated scale"
        ),
        "floors": floors,
        "report": report,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--halueval-pairs", type=int, default=None, help="per split; all if unset")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    started = time.monotonic()
    maps = load_score_maps(calibration_sha256=calibration_sha256())
    rows = load_rows(args.cache, args.halueval_pairs)
    result = fit(collect(rows, maps), maps)
    result["seconds"] = round(time.monotonic() - started, 1)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
