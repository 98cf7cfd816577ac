"""Labelled data for the embedded judge, and its developer / held-out split.

Reads ``shared/datasets`` (see its README). Every item gets a split from a stable hash
of a grouping key: ``dev`` items may be used to fit the judge's calibration
(``bench.quality.embedded_fit``), ``test`` items only to report on
(``bench.quality.embedded_judge``). RAGTruth is grouped by ``source_id`` (the six
responses to one question and its passages land on the same side), HaluEval by the
question. FaithBench is never used for fitting: all of it is held out.
"""

from __future__ import annotations

import glob
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detectors.regex import compile_pattern, iter_matches

DATA = Path(__file__).resolve().parents[3] / "shared" / "datasets"
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


def sentence_labels(item: RagItem, sentences: list[str]) -> Iterator[bool]:
    """For each claim sentence (in order), does it overlap a labelled hallucination span?"""
    pos = 0
    for sent in sentences:
        start = item.response.find(sent, pos)
        if start < 0:
            start = item.response.find(sent)
        if start < 0:  # glued pieces: fall back to the words of the span texts
            yield any(sent[:40] in item.response[s:e] for s, e in item.spans)
            continue
        end = start + len(sent)
        pos = end
        yield any(s < end and start < e for s, e in item.spans)


def judge_fingerprint(raw: bool = False) -> str:
    """sha256 (first 12 hex) of the embedded judge's code and calibration files, so a
    result can be matched to the judge version that produced it. With the score maps
    (``embedded_score_maps.json``, ``score_maps.py``, ``metrics/common.py``) unless
    `raw`: the raw scales do not depend on them."""
    root = Path(__file__).resolve().parents[2] / "monitors"
    digest = hashlib.sha256()
    names: tuple[str, ...] = (
        "judges/embedded.py",
        "judges/embedded_encoder.py",
        "judges/claims.py",
        "judges/embedded_calibration.json",
        "metrics/triad.py",
    )
    if not raw:
        names += ("judges/embedded_score_maps.json", "judges/score_maps.py", "metrics/common.py")
    for name in names:
        path = root / name  # a missing file is an error: the fingerprint must cover it
        digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]
