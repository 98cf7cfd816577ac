"""Adapters from the labelled public data sets (``../shared/datasets``) to ragpulse events.

Benchmark code, not product code. Each module turns one data set into ragpulse event
dicts (``stream.contract.events.Event``) following the mapping in the data set's README:
``query`` ← the question / prompt, ``retrieved_context`` ← the passages / source /
knowledge (one chunk per passage), ``response`` ← the answer / completion / summary.
The gold labels ride in ``labels``:

* ``dataset``, ``split`` (``dev`` / ``test``, the same salted hash as
  ``tests.support.datasets.sources``), ``category`` (for report breakdowns);
* ``human``: ``{metric_name: value}`` for ``ragpulse calibrate`` (``faithfulness``:
  ``true`` = faithful) where the data set has a human or construction label for a judge
  metric, and ``overall`` (the reviewer's overall verdict, ``true`` = fine) where the
  label says whether the turn as a whole is fine;
* reference fields of the event contract where the data set has them
  (``expected_answer``: TruthfulQA's best answer);
* data-set specific fields (``hallucinated``, ``final_label``, ``refused``, ...).

Command line: ``python -m bench.datasets NAME --split dev|test|all -o events.jsonl
[--labels labels.jsonl] [--limit N]``. With ``--labels`` the labels go to that file as
``{"event_id", "labels"}`` lines and the events carry none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support.datasets import faithbench, halueval, ragtruth, truthfulqa, xstest
from tests.support.datasets.common import DATA, SPLITS, validate

__all__ = ["ADAPTERS", "DATA", "SPLITS", "adapt", "available", "validate"]

Adapter = Callable[[str, Path], Iterator[dict[str, Any]]]

#: name -> adapter(split, data_dir) yielding event dicts (with ``labels``)
ADAPTERS: dict[str, Adapter] = {
    "xstest": xstest.events,
    "ragtruth": ragtruth.events,
    "faithbench": faithbench.events,
    "halueval_qa": halueval.qa_events,
    "halueval_general": halueval.general_events,
    "truthfulqa": truthfulqa.events,
}


def available() -> list[str]:
    return sorted(ADAPTERS)


def adapt(name: str, split: str = "all", data: Path = DATA) -> Iterator[dict[str, Any]]:
    """Event dicts of data set `name` in `split` (``dev``, ``test`` or ``all``)."""
    if name not in ADAPTERS:
        raise ValueError(f"unknown data set {name!r}; available: {available()}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; one of {SPLITS}")
    return ADAPTERS[name](split, data)
