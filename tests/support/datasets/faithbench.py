"""FaithBench: 400 summaries of hard sources by 10 LLMs, human span annotations.

``query`` = the fixed "Summarize the document.", ``retrieved_context`` = the source
(one chunk), ``response`` = the summary. Labels: ``hallucinated`` (an annotation label
starting with ``Unwanted``), ``category`` ``faithful`` / ``hallucinated``,
``human.faithfulness``, and ``baselines``: the detectors' scores shipped in the data's
``metadata`` (HHEM-2.1, GPT-4o, ...; score < 0.5 = hallucinated). FaithBench was never
used for fitting: every item is in the ``test`` split, ``--split dev`` yields nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.datasets.common import event, keep
from tests.support.datasets.sources import faithbench

__all__ = ["BASELINES", "events"]

BASELINES = ("hhem-2.1", "gpt_4o", "gpt-4-turbo", "hhemv1", "trueteacher", "true_nli")


def events(split: str, data: Path) -> Iterator[dict[str, Any]]:
    for it in faithbench(data):
        if not keep(it.split, split):
            continue
        labels = {
            "dataset": "faithbench",
            "split": it.split,
            "category": "hallucinated" if it.hallucinated else "faithful",
            "hallucinated": it.hallucinated,
            "human": {"faithfulness": not it.hallucinated},
            "baselines": {k: float(it.meta[k]) for k in BASELINES if k in it.meta},
        }
        summarizer = it.meta.get("summarizer")
        yield event(
            f"faithbench:{it.id}",
            it.query,
            it.response,
            it.contexts,
            labels,
            model=str(summarizer) if summarizer else None,
        )
