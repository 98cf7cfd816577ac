"""TruthfulQA (half of the questions): reference-based answer correctness.

One event per answer of a question, no retrieved context (the questions are about world
knowledge): ``query`` = ``Question``, ``response`` = one answer of ``Correct Answers``
(``truthfulqa:<row>:c<k>``) or of ``Incorrect Answers`` (``truthfulqa:<row>:i<k>``), both
``;``-separated; ``<row>`` is the 0-based data row of the CSV and ``<k>`` the 1-based
position of the answer in its (non-empty) list. The correct answer identical to the
``Best Answer`` (after whitespace, case and trailing-period normalisation) is left out:
the best answer is the reference, and scoring it against itself says nothing.

Labels: ``category`` ``correct`` / ``incorrect``, ``expected_answer`` = ``Best Answer``,
``human`` = ``{"overall": correct, "answer_correctness": correct}`` (by construction),
``pair`` = the row, ``topic`` = the CSV ``Category``. Split: salted hash of the question,
so all answers of a question fall on one side.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.datasets.common import event, keep, split_of

__all__ = ["answers", "events", "normalise"]

FILE = Path("truthfulqa") / "truthfulqa.csv"


def normalise(text: str) -> str:
    """Case-folded, whitespace-collapsed, without trailing periods (for identity checks)."""
    return re.sub(r"\s+", " ", text).strip().casefold().rstrip(".").rstrip()


def answers(cell: str) -> list[str]:
    """The non-empty ``;``-separated answers of a CSV cell, stripped."""
    return [a.strip() for a in cell.split(";") if a.strip()]


def events(split: str, data: Path) -> Iterator[dict[str, Any]]:
    with (data / FILE).open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row_no, row in enumerate(rows):
        question, best = row["Question"].strip(), row["Best Answer"].strip()
        side = split_of(f"truthfulqa:{question}")
        if not keep(side, split):
            continue
        for kind, cell in (("c", row["Correct Answers"]), ("i", row["Incorrect Answers"])):
            correct = kind == "c"
            for k, answer in enumerate(answers(cell), 1):
                if correct and normalise(answer) == normalise(best):
                    continue
                labels = {
                    "dataset": "truthfulqa",
                    "split": side,
                    "category": "correct" if correct else "incorrect",
                    "expected_answer": best,
                    "human": {"overall": correct, "answer_correctness": correct},
                    "pair": row_no,
                    "topic": row["Category"],
                }
                yield event(f"truthfulqa:{row_no}:{kind}{k}", question, answer, [], labels)
