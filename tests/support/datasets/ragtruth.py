"""RAGTruth QA test subset: 422 responses of 6 models, human hallucination spans.

``query`` = ``query``, ``retrieved_context`` = the passages of ``d1`` (one chunk per
"passage N:", as ``tests.support.datasets.sources.passages``), ``response`` = ``d2``,
``model`` = the generating model. Labels: ``hallucinated`` (any labelled span),
``category`` ``faithful`` / ``hallucinated``, ``human.faithfulness`` (``true`` = no
span), the spans ``{start, end, label_type}``, ``quality`` and ``source_id``. Split:
``tests.support.datasets.sources`` (by ``source_id``). Every response of this subset has
``quality: good``: it holds no ``incorrect_refusal`` (or ``truncated``) row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.datasets.common import event, keep, split_of
from tests.support.datasets.sources import passages

__all__ = ["events"]


def events(split: str, data: Path) -> Iterator[dict[str, Any]]:
    with (data / "ragtruth" / "ragtruth_qa_test_subset.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            side = split_of(f"ragtruth:{row['source_id']}")
            if not keep(side, split):
                continue
            bad = bool(row["labels"])
            labels = {
                "dataset": "ragtruth",
                "split": side,
                "category": "hallucinated" if bad else "faithful",
                "hallucinated": bad,
                "human": {"faithfulness": not bad},
                "spans": [
                    {"start": int(x["start"]), "end": int(x["end"]), "label_type": x["label_type"]}
                    for x in row["labels"]
                ],
                "quality": row.get("quality"),
                "source_id": str(row["source_id"]),
            }
            yield event(
                f"ragtruth:{row['id']}",
                row["query"],
                row["d2"],
                passages(row["d1"]),
                labels,
                model=row.get("model"),
            )
