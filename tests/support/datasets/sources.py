"""Readers of the labelled public data sets in ``shared/datasets`` (see its README), and
their developer / held-out split.

Every item gets a split from a stable hash of a grouping key: ``dev`` items may be used to
fit the embedded judge's calibration (``bench.quality.embedded_fit``), ``test`` items only
to report on. RAGTruth is grouped by ``source_id`` (the six responses to one question and
its passages land on the same side), HaluEval by the question. FaithBench is never used
for fitting: all of it is held out. Test support: the adapters of
``tests.support.datasets`` and the benchmarks (``bench.quality.judge_data``) read them here.
"""

from __future__ import annotations

import glob
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detectors.regex import compile_pattern, iter_matches

__all__ = [
    "DATA", "SALT", "PairItem", "RagItem", "faithbench", "halueval", "passages", "ragtruth",
    "split_of",
]  # fmt: skip

DATA = Path(__file__).resolve().parents[4] / "shared" / "datasets"
SALT = "ragpulse-embedded-judge-v1"
_PASSAGE = compile_pattern(r"(?:^|\n+)passage \d+:")


def split_of(key: str) -> str:
    """``dev`` or ``test`` (about half each), from a stable hash of `key`."""
    digest = hashlib.sha256(f"{SALT}:{key}".encode()).digest()
    return "dev" if digest[0] < 128 else "test"


@dataclass
class RagItem:
    id: str
    split: str
    query: str
    contexts: list[str]
    response: str
    hallucinated: bool
    spans: list[tuple[int, int]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class PairItem:
    id: str
    split: str
    question: str
    knowledge: str
    right: str
    hallucinated: str


def passages(d1: str) -> list[str]:
    """RAGTruth's ``d1`` ("passage 1:... passage 2:...") as one chunk per passage."""
    bounds = [(s, e) for s, e, _ in iter_matches(_PASSAGE, d1, 100)]
    if not bounds:
        return [d1.strip()]
    ends = [s for s, _ in bounds[1:]] + [len(d1)]
    return [d1[e:end].strip() for (_, e), end in zip(bounds, ends, strict=True)]


def ragtruth(data: Path = DATA) -> list[RagItem]:
    items = []
    with (data / "ragtruth" / "ragtruth_qa_test_subset.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            items.append(
                RagItem(
                    id=str(row["id"]),
                    split=split_of(f"ragtruth:{row['source_id']}"),
                    query=row["query"],
                    contexts=passages(row["d1"]),
                    response=row["d2"],
                    hallucinated=bool(row["labels"]),
                    spans=[(int(x["start"]), int(x["end"])) for x in row["labels"]],
                    meta={"model": row["model"], "source_id": row["source_id"]},
                )
            )
    return items


def halueval(data: Path = DATA) -> list[PairItem]:
    items = []
    with (data / "halueval" / "qa_data.jsonl").open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            row = json.loads(line)
            items.append(
                PairItem(
                    id=str(n),
                    split=split_of(f"halueval:{row['question']}"),
                    question=row["question"],
                    knowledge=row["knowledge"],
                    right=row["right_answer"],
                    hallucinated=row["hallucinated_answer"],
                )
            )
    return items


def faithbench(data: Path = DATA) -> list[RagItem]:
    """FaithBench summaries; `meta` keeps the shipped detectors' scores."""
    items = []
    for path in sorted(glob.glob(str(data / "faithbench" / "batch_*.json"))):
        batch = Path(path).stem
        for s in json.loads(Path(path).read_text(encoding="utf-8"))["samples"]:
            unwanted = any(
                label.startswith("Unwanted") for a in s["annotations"] for label in a["label"]
            )
            items.append(
                RagItem(
                    id=f"{batch}:{s['sample_id']}",
                    split="test",
                    query="Summarize the document.",
                    contexts=[s["source"]],
                    response=s["summary"],
                    hallucinated=unwanted,
                    meta=dict(s["metadata"]),
                )
            )
    return items
