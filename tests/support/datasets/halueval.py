"""HaluEval QA (right vs hallucinated answers) and HaluEval general (human yes/no).

* ``halueval_qa``: two events per row, ``halueval_qa:<n>:right`` and
  ``halueval_qa:<n>:hallucinated``: ``query`` = ``question``, ``retrieved_context`` =
  ``knowledge`` (one chunk), ``response`` = ``right_answer`` / ``hallucinated_answer``.
  Labels by construction: ``hallucinated``, ``category`` ``faithful`` / ``hallucinated``,
  ``human.faithfulness`` and ``human.overall`` (both ``not hallucinated``), ``pair`` (the
  row number). Split by question (``tests.support.datasets.sources``).
* ``halueval_general``: ``query`` = ``user_query``, ``response`` = ``chatgpt_response``,
  **no retrieved context** (the data set has none: its hallucinations are against world
  knowledge). Labels: the humans' ``hallucination`` yes/no as ``hallucinated``,
  ``category`` and ``hallucination_spans``. No ``human`` entry: ``faithfulness`` needs a
  context, so no judge metric of ragpulse scores what these labels describe.
  Split: salted hash of ``user_query``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.datasets.common import event, keep, split_of
from tests.support.datasets.sources import halueval

__all__ = ["general_events", "qa_events"]


def qa_events(split: str, data: Path) -> Iterator[dict[str, Any]]:
    for it in halueval(data):
        if not keep(it.split, split):
            continue
        for kind, answer in (("right", it.right), ("hallucinated", it.hallucinated)):
            bad = kind == "hallucinated"
            labels = {
                "dataset": "halueval_qa",
                "split": it.split,
                "category": "hallucinated" if bad else "faithful",
                "hallucinated": bad,
                "human": {"faithfulness": not bad, "overall": not bad},
                "pair": int(it.id),
            }
            yield event(f"halueval_qa:{it.id}:{kind}", it.question, answer, [it.knowledge], labels)


def general_events(split: str, data: Path) -> Iterator[dict[str, Any]]:
    with (data / "halueval" / "general_data.json").open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            side = split_of(f"halueval_general:{row['user_query']}")
            if not keep(side, split):
                continue
            bad = str(row["hallucination"]).strip().lower() == "yes"
            labels = {
                "dataset": "halueval_general",
                "split": side,
                "category": "hallucinated" if bad else "faithful",
                "hallucinated": bad,
                "hallucination_spans": list(row.get("hallucination_spans") or []),
            }
            yield event(
                f"halueval_general:{row['ID']}",
                row["user_query"],
                row["chatgpt_response"],
                [],
                labels,
            )
