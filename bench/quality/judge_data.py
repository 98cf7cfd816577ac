"""Labelled data for the embedded judge, and its developer / held-out split.

Reads ``shared/datasets`` (see its README). Every item gets a split from a stable hash
of a grouping key: ``dev`` items may be used to fit the judge's calibration
(``bench.quality.embedded_fit``), ``test`` items only to report on
(``bench.quality.embedded_judge``). RAGTruth is grouped by ``source_id`` (the six
responses to one question and its passages land on the same side), HaluEval by the
question. FaithBench is never used for fitting: all of it is held out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

# the readers and the split live with the dataset adapters (test support)
from tests.support.datasets.sources import DATA as DATA
from tests.support.datasets.sources import SALT as SALT
from tests.support.datasets.sources import PairItem as PairItem
from tests.support.datasets.sources import RagItem as RagItem
from tests.support.datasets.sources import faithbench as faithbench
from tests.support.datasets.sources import halueval as halueval
from tests.support.datasets.sources import passages as passages
from tests.support.datasets.sources import ragtruth as ragtruth
from tests.support.datasets.sources import split_of as split_of


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
