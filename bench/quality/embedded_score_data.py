"""Raw (uncalibrated) embedded-judge metric scores on the labelled data, cached on disk.

What ``bench.quality.embedded_score_maps`` fits its score maps on (``dev`` rows) and
reports on (``dev`` out-of-fold, ``test``). One row per scored text, each with the
metric's *raw* output exactly as the metric computes it with the embedded judge
(``monitors.metrics.triad``), a label (``fine``: True = the turn is fine) and a group
key (rows of one group always fall in the same cross-validation fold):

* ``faithfulness``: ``support(response, chunks, known=[query])``. RAGTruth (fine = no
  labelled hallucination span; group = ``source_id``), HaluEval QA (the right answer is
  fine, the hallucinated one is not; group = the question), FaithBench (fine = no
  ``Unwanted`` annotation; all ``test``, group = its batch file). Each row also keeps its
  claims' features (for experiments that re-aggregate claims without re-encoding) and,
  for RAGTruth, each claim's support on its own (no known texts, as
  ``citation_accuracy`` scores a cited sentence) with its span label.
* ``answer_relevance``: ``relevance(query, [response])``; fine = the item's own
  response (RAGTruth) or answer (HaluEval QA, right and hallucinated: both address the
  question), not fine = another item's.
* ``context_relevance``: the mean of ``relevance(query, chunks)``; fine = the item's own
  passages (RAGTruth, once per source) / knowledge (HaluEval QA), not fine = another
  item's.

Relevance rows store cosine similarities, so the logistic of ``embedded_calibration.json``
can be re-applied without re-encoding. The cache file is keyed by
``judge_fingerprint(raw=True)``: a change to the judge's code or raw calibration
invalidates it (the score maps do not: they are what is fitted here).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.quality.judge_data import (
    faithbench,
    halueval,
    judge_fingerprint,
    ragtruth,
    sentence_labels,
)
from monitors.judges.embedded import MiniLMJudge

__all__ = ["Row", "collect", "load_rows", "rows_of"]

DATASETS = ("ragtruth", "halueval", "faithbench")


@dataclass
class Row:
    metric: str
    dataset: str
    split: str
    group: str
    fine: bool
    raw: float = 0.0  # the metric's raw output (faithfulness) or mean chunk relevance
    sims: list[float] = field(default_factory=list)  # relevance rows: cosine per chunk
    claims: list[list[float]] = field(default_factory=list)  # faithfulness: claim features
    claim_bad: list[bool] = field(default_factory=list)  # RAGTruth: claim overlaps a span
    # RAGTruth: each claim's support alone, no known texts (what citation_accuracy scores)
    sentence_support: list[float] = field(default_factory=list)
    item: str = ""


def _rel(judge: MiniLMJudge, sims: list[float]) -> float:
    cal = judge.calibration["relevance"]
    vals = [1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, cal["a"] * s + cal["b"])))) for s in sims]
    return sum(vals) / len(vals)


def _faith(judge: MiniLMJudge, query: str, response: str, ctx: list[str]) -> tuple[float, Any]:
    score = judge.support(response, ctx, known=[query]).score
    claims = judge.claims(response, ctx, [query]) if any(c.strip() for c in ctx) else []
    return score, claims


def _ragtruth(judge: MiniLMJudge) -> Iterator[Row]:
    items = ragtruth()
    seen: set[str] = set()
    for n, it in enumerate(items):
        group = str(it.meta["source_id"])
        score, claims = _faith(judge, it.query, it.response, it.contexts)
        bad = list(sentence_labels(it, [c.text for c in claims]))
        alone = judge.claims(it.response, it.contexts)
        yield Row(
            "faithfulness",
            "ragtruth",
            it.split,
            group,
            not it.hallucinated,
            score,
            claims=[c.features() for c in claims],
            claim_bad=bad,
            sentence_support=[judge.rescale(c.support) for c in alone],
            item=it.id,
        )
        # another item of the same split, another question (the split is by source)
        others = [o for o in items[n + 1 :] + items[:n] if o.split == it.split]
        other = next(o for o in others[6:] + others if o.query != it.query)
        sims = judge.similarities(it.query, [it.response, other.response])
        yield Row("answer_relevance", "ragtruth", it.split, group, True, sims=sims[:1])
        yield Row("answer_relevance", "ragtruth", it.split, group, False, sims=sims[1:])
        if group not in seen:
            seen.add(group)
            own = judge.similarities(it.query, it.contexts)
            yield Row("context_relevance", "ragtruth", it.split, group, True, sims=own)
            mis = judge.similarities(it.query, other.contexts)
            yield Row("context_relevance", "ragtruth", it.split, group, False, sims=mis)


def _halueval(judge: MiniLMJudge, pairs: int | None) -> Iterator[Row]:
    items = halueval()
    for split in ("dev", "test"):
        chosen = [p for p in items if p.split == split][:pairs]
        for n, p in enumerate(chosen):
            group = f"q{p.id}"
            for answer, fine in ((p.right, True), (p.hallucinated, False)):
                score, claims = _faith(judge, p.question, answer, [p.knowledge])
                yield Row(
                    "faithfulness",
                    "halueval",
                    split,
                    group,
                    fine,
                    score,
                    claims=[c.features() for c in claims],
                    item=f"{p.id}:{'right' if fine else 'hallucinated'}",
                )
            other = chosen[(n + 1) % len(chosen)]
            sims = judge.similarities(p.question, [p.right, p.hallucinated, other.right])
            yield Row("answer_relevance", "halueval", split, group, True, sims=sims[:1])
            yield Row("answer_relevance", "halueval", split, group, True, sims=sims[1:2])
            yield Row("answer_relevance", "halueval", split, group, False, sims=sims[2:])
            sims = judge.similarities(p.question, [p.knowledge, other.knowledge])
            yield Row("context_relevance", "halueval", split, group, True, sims=sims[:1])
            yield Row("context_relevance", "halueval", split, group, False, sims=sims[1:])


def _faithbench(judge: MiniLMJudge) -> Iterator[Row]:
    for it in faithbench():
        score, claims = _faith(judge, it.query, it.response, it.contexts)
        yield Row(
            "faithfulness",
            "faithbench",
            it.split,
            it.id.split(":", 1)[0],  # the batch: FaithBench's own unit of collection
            not it.hallucinated,
            score,
            claims=[c.features() for c in claims],
            item=it.id,
        )


def collect(judge: MiniLMJudge, pairs: int | None, log: bool = True) -> list[Row]:
    rows: list[Row] = []
    for name, gen in (
        ("ragtruth", _ragtruth(judge)),
        ("halueval", _halueval(judge, pairs)),
        ("faithbench", _faithbench(judge)),
    ):
        for row in gen:
            if row.sims:
                row.raw = _rel(judge, row.sims)
            rows.append(row)
        if log:
            print(f"collected {name}: {len(rows)} rows so far", flush=True)
    return rows


def load_rows(cache: Path | None, pairs: int | None, log: bool = True) -> list[Row]:
    """The rows, from `cache` when it was written by the same judge code and pair count."""
    key = {"judge_code": judge_fingerprint(raw=True), "halueval_pairs": pairs, "rows": 2}
    if cache is not None and cache.is_file():
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("key") == key:
            return [Row(**r) for r in data["rows"]]
        if log:
            print(f"{cache}: written by another judge version, recomputing", flush=True)
    judge = MiniLMJudge(threads=1, cache_size=50_000, score_maps=False)  # raw scores
    rows = collect(judge, pairs, log)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        payload = {"key": key, "rows": [asdict(r) for r in rows]}
        cache.write_text(json.dumps(payload), encoding="utf-8")
    return rows


def rows_of(
    rows: list[Row], metric: str, split: str | None = None, dataset: str | None = None
) -> list[Row]:
    return [
        r
        for r in rows
        if r.metric == metric
        and (split is None or r.split == split)
        and (dataset is None or r.dataset == dataset)
    ]
